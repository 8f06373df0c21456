package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// DefaultTick is the controller tick used when Options.Tick is zero. The
// live controller ticks every second; ten seconds of virtual time make a
// month-long trace ten times cheaper to replay and move waits by at most
// the difference, which is small beside elastic start-up delays of minutes.
// Pass the live tick when seconds matter (the live-versus-simulated test
// does).
const DefaultTick = 10 * time.Second

// defaultFixedPool names the fixed pool added when Options has quota but no
// fixed pool.
const defaultFixedPool = "fixed"

// Options configures one run.
type Options struct {
	// Config holds the policy's thresholds. A zero Config stands for
	// policy.DefaultConfig(): it could not be meant literally, since a zero
	// High fails validation.
	Config policy.Config
	// Pools are the pools the policy sees: the fixed pool (the quota; its
	// price is the quota's price), or with FixedSlotsByPool one fixed pool
	// per flavor, and any number of elastic pools with their prices,
	// billing, MinBilling, StartupDelay, MaxWorkers, SlotsPerWorker,
	// IdleTTL and Labels. Workers carry their pool's Labels, and a trace
	// job's Requires must all be among them (see the package doc).
	Pools []policy.Pool
	// FixedSlots is the fixed quota. It is modelled as one fixed worker
	// with that many slots, since the policy only ever counts fixed slots
	// and one worker keeps Decide's input small. With quota but no fixed
	// pool in Pools, a pool named "fixed" is added.
	FixedSlots int
	// FixedWorkerSlots, when > 0, splits the quota into fixed workers of
	// that many slots (the last one takes what is left), as GPU machines
	// come in sizes: a job of k slots then needs k free slots on one of
	// them. Zero keeps the quota one worker of FixedSlots slots.
	FixedWorkerSlots int
	// FixedSlotsByPool, when not empty, is the quota of each fixed pool
	// by name, for fleets that buy quota per GPU model (flavor): every
	// fixed pool of Pools must be named, with 0 for none. A pool's quota
	// is cut into workers of its SlotsPerWorker (the last one takes what
	// is left; 0 makes one worker of the whole quota), which carry its
	// Labels, and it is billed at its own PricePerSlotHour, or
	// FixedPricePerSlotHour when that is 0. FixedSlots must then be 0 or
	// the sum, and FixedWorkerSlots 0; Result.FixedSlots is the sum.
	FixedSlotsByPool map[string]int
	// FixedPricePerSlotHour prices the quota of a fixed pool that has no
	// PricePerSlotHour of its own.
	FixedPricePerSlotHour float64
	// Tick is the controller tick in virtual time, DefaultTick when zero.
	// Decide runs on tick boundaries only, so every move (lend, reclaim,
	// scale up, release) lands up to a tick after what caused it: a longer
	// tick adds to burst waits and keeps idle workers a little longer, but
	// makes fewer Decide calls and so a faster run. Keep
	// Config.ReleaseMargin at least one tick, as in production, or
	// per-minute and per-hour workers can miss their release window.
	Tick time.Duration
	// SpotReclaimRate is the expected number of reclaims per spot
	// worker-hour (a Poisson process per worker); 0 means spot capacity is
	// never taken away.
	SpotReclaimRate float64
	// CheckpointInterval is how often a running checkpointable job writes a
	// checkpoint; a stop loses the work since the last one. Zero means a
	// checkpointable job loses nothing when stopped.
	CheckpointInterval time.Duration
	// CheckpointOverhead is how long a checkpointable job stopped by the
	// policy (reclaim, migrate) keeps its slot while it winds down; it is
	// slot time the job uses on top of its Duration. `ballast simulate
	// --checkpoint-overhead measured` sets it from the upload times the
	// workers recorded (queues/checkpoints, Store.Uploads).
	CheckpointOverhead time.Duration
	// Seed seeds the randomness of a run: the spot reclaims and, with
	// FixedDeathRate, the deaths of fixed workers (each from a generator
	// of its own, so turning deaths on leaves the spot reclaims as they
	// were).
	Seed uint64
	// FixedDeaths lists deaths of fixed workers (see FixedDeath and the
	// package doc); none by default, and shares-off runs without them
	// are as before.
	FixedDeaths []FixedDeath
	// FixedDeathRate, when > 0, is the expected deaths per fixed
	// worker-hour while the worker is up (a Poisson process per worker,
	// seeded by Seed); each death keeps the worker down for
	// FixedDowntime. Give FixedDeaths or a rate, not both.
	FixedDeathRate float64
	// FixedDowntime is how long a worker that FixedDeathRate kills stays
	// down; required with a rate.
	FixedDowntime time.Duration
	// WorkerTTL is how long the controller takes to declare a silent
	// worker dead, and so to requeue its jobs; DefaultWorkerTTL when zero,
	// the live controller's default.
	WorkerTTL time.Duration
	// CoreMaxWaitByTemplate overrides Config.CoreMaxWait for the core jobs
	// of a template, by template name, as a template's core_max_wait does
	// live (0 overflows at once). Config.CoreOverflow still switches rule 7
	// on.
	CoreMaxWaitByTemplate map[string]time.Duration
	// StopOverP95, when > 0, ends the run as soon as the p95 wait of core
	// or of burst jobs is sure to exceed it: more of the class's jobs have
	// waited longer than the p95 allows. The Result then says why in
	// Stopped and counts the jobs not run as Unfinished. A planner that
	// only wants plans meeting a wait target learns "no" in a fraction of
	// the time a hopeless backlog would take to replay.
	StopOverP95 time.Duration
}

// setup is Options checked and with the defaults filled in.
type setup struct {
	cfg   policy.Config
	pools []policy.Pool
	// cpusDeclared and memDeclared say some pool declares what its
	// workers offer: only then do jobs' CPUs and memory bind, as live a
	// worker that reports none holds any.
	cpusDeclared, memDeclared bool
	// quotas are the fixed pools with their slots, in pools order; none
	// without a fixed pool. fixedSlots is their sum.
	quotas     []fixedQuota
	fixedSlots int
	tickLen    time.Duration
	spotRate   float64 // per hour
	ckptEvery  time.Duration
	ckptCost   time.Duration
	seed       uint64
	waitByTmpl map[string]time.Duration
	// overflowLead is how long an overflowed core job takes to start:
	// the slowest on-demand start-up plus two ticks, as live.
	overflowLead time.Duration
	stopOver     time.Duration
	// deaths are Options.FixedDeaths by time (fixed worker indexes
	// checked), deathRate per hour, downtime and ttl as in Options.
	deaths    []FixedDeath
	deathRate float64
	downtime  time.Duration
	ttl       time.Duration
}

// prepare validates o and fills in its defaults. Every problem is reported
// at once, as policy.Config.Validate does.
func prepare(o Options) (setup, error) {
	s := setup{
		cfg:        o.Config,
		pools:      slices.Clone(o.Pools),
		tickLen:    o.Tick,
		spotRate:   o.SpotReclaimRate,
		ckptEvery:  o.CheckpointInterval,
		ckptCost:   o.CheckpointOverhead,
		seed:       o.Seed,
		waitByTmpl: o.CoreMaxWaitByTemplate,
		stopOver:   o.StopOverP95,
	}
	if s.cfg.IsZero() {
		s.cfg = policy.DefaultConfig()
	}
	for _, p := range s.pools {
		s.cpusDeclared = s.cpusDeclared || p.CPUs > 0
		s.memDeclared = s.memDeclared || p.Memory > 0
	}
	if s.tickLen == 0 {
		s.tickLen = DefaultTick
	}
	for _, p := range s.pools {
		if p.Kind == policy.PoolOnDemand {
			s.overflowLead = max(s.overflowLead, p.StartupDelay)
		}
	}
	s.overflowLead += 2 * s.tickLen
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("sim: "+format, args...)) }
	if s.tickLen < 0 {
		bad("tick is %v; it must be positive", s.tickLen)
	}
	if !(o.FixedPricePerSlotHour >= 0) || math.IsInf(o.FixedPricePerSlotHour, 0) {
		bad("fixed_price_per_slot_hour is %v; it must be a finite price >= 0", o.FixedPricePerSlotHour)
	}
	if !(s.spotRate >= 0) || math.IsInf(s.spotRate, 0) {
		bad("spot_reclaim_rate is %v; it must be a finite rate >= 0", s.spotRate)
	}
	for name, d := range s.waitByTmpl {
		if d < 0 {
			bad("core_max_wait_by_template[%s] is %v; write 0 to overflow at once, or a positive wait", name, d)
		}
	}
	if s.stopOver < 0 {
		bad("stop_over_p95 is %v; write 0 to run every job, or a positive wait", s.stopOver)
	}
	if s.ckptEvery < 0 || s.ckptCost < 0 {
		bad("checkpoint_interval and checkpoint_overhead cannot be negative")
	}
	if len(o.FixedSlotsByPool) > 0 {
		s.quotasByPool(o, bad)
	} else {
		s.oneQuota(o, bad)
	}
	s.prepareDeaths(o, bad)
	if s.cfg.Shares.On() {
		// Rule 9 lets work borrow only if its grace plus a tick fits
		// reclaim_within: the tick is the run's.
		if s.cfg.Tick == 0 {
			s.cfg.Tick = s.tickLen
		}
		if err := s.cfg.Shares.Validate(s.fixedSlots, s.tickLen); err != nil {
			bad("%v", err)
		}
	}
	// The policy's own checks cover the thresholds and every pool field.
	if err := (policy.Snapshot{Config: s.cfg, Pools: s.pools}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("sim: %w", err))
	}
	return s, errors.Join(errs...)
}
