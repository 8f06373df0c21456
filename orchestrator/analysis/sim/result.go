package sim

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// Result is what one run measured. Slot-hours count one slot for one hour;
// costs are in the currency of the pools' prices.
type Result struct {
	Cost Cost
	// FixedSlots is the quota the run had, every fixed pool's together.
	FixedSlots int
	// FixedIdleShare is the share of the quota's slot-hours over the run
	// that ran nothing: 1 - SlotHours.Fixed / (FixedSlots × span). It is 0
	// without quota.
	FixedIdleShare float64
	// CoreWait is submit to start for core jobs, ElasticWait for burst jobs
	// wherever they ran. A job starts when the last of its slots first
	// starts; requeues after a stop are not counted again.
	CoreWait, ElasticWait Percentiles
	Preemptions           Preemptions
	// FixedDeaths counts the deaths of fixed workers the run went
	// through (Options.FixedDeaths, FixedDeathRate).
	FixedDeaths int `json:",omitzero"`
	// LostWork is the slot-hours of work thrown away by stops: the time
	// since the last checkpoint, or since the start for jobs that cannot
	// resume.
	LostWork float64
	// OverheadSlotHours is slot time spent winding down after a policy stop
	// (Options.CheckpointOverhead per stop of a checkpointable job).
	OverheadSlotHours float64
	// DeadlineMisses counts jobs with a deadline that finished late or not
	// at all.
	DeadlineMisses int
	// Jobs is how many jobs finished; Unfinished how many never could
	// (queued with no capacity that may run them), or were not run because
	// the run stopped early.
	Jobs, Unfinished int
	// Stopped says why the run ended before its last job (Options.StopOverP95);
	// empty for a run that went to the end.
	Stopped string
	// SlotHours is the slot time jobs used, by pool kind, including lost
	// work and stop overhead.
	SlotHours SlotHours
	// PeakElasticWorkers is the most elastic workers paid for at once,
	// counting launches still starting (they are billed from the request).
	PeakElasticWorkers int
	// SimulatedSeconds is the span of the run: from the trace start to the
	// last thing that happened (a job event, a worker boot or reclaim, or a
	// tick that acted).
	SimulatedSeconds float64
	// Decisions is how many times Decide ran, and Actions how many actions
	// of each kind it planned.
	Decisions int
	Actions   map[policy.ActionKind]int
	// Pools has one entry per pool, in Options order.
	Pools []PoolUsage
	// Templates has one entry per template, by name.
	Templates []TemplateUsage
	// Teams is what each team went through under team shares; empty
	// without them.
	Teams []TeamResult `json:",omitempty"`
}

// Cost splits what the run paid.
type Cost struct {
	// Fixed is FixedSlots × price × span, whatever the use.
	Fixed float64
	// OnDemand and Spot are the billed time of elastic workers, from the
	// launch request to the release as policy.Pool.PaidUntil bills it.
	OnDemand, Spot float64
	Total          float64
}

// Percentiles summarizes a set of waits. All are zero for an empty set.
type Percentiles struct {
	N                  int
	P50, P95, P99, Max time.Duration
	Mean               time.Duration
}

// Preemptions counts stops of one slot of a job, by reason.
type Preemptions struct {
	// Reclaim counts burst jobs taken off fixed slots for core work (rule 1).
	Reclaim int
	// Migrate counts jobs moved from elastic capacity back to quota (rule 4).
	Migrate int
	// Spot counts jobs whose spot worker the provider reclaimed.
	Spot int
	// Lost counts jobs requeued because their fixed worker died
	// (Options.FixedDeaths, FixedDeathRate).
	Lost int `json:",omitzero"`
	// Repack counts burst jobs moved off an elastic worker so that it
	// empties and is released (rule 5).
	Repack int `json:",omitzero"`
}

// Count is the preemptions the reports show: the policy's stops and the
// spot market's. Lost jobs are apart: a dead worker is no preemption.
func (p Preemptions) Count() int { return p.Reclaim + p.Migrate + p.Repack + p.Spot }

// SlotHours splits slot time by pool kind.
type SlotHours struct {
	Fixed, OnDemand, Spot float64
}

// PoolUsage is what one pool did over the run. A fleet with a quota per
// flavor (Options.FixedSlotsByPool) has one per fixed pool, so a planner
// can weigh each flavor's quota against its own waits.
type PoolUsage struct {
	Name string
	Kind policy.PoolKind
	// Labels are the pool's, which its workers carry (shared with
	// Options.Pools: read only).
	Labels map[string]string `json:",omitempty"`
	// FixedSlots is the pool's quota (fixed pools).
	FixedSlots int `json:",omitzero"`
	// Launched counts workers started, Reclaimed the spot workers the
	// provider took back (elastic pools).
	Launched, Reclaimed int
	// PeakWorkers is the most workers paid for at once (elastic pools).
	PeakWorkers int
	// WorkerHours is the worker-hours from launch requests to releases,
	// and BilledHours what the billing made of them (elastic pools).
	WorkerHours, BilledHours float64
	// SlotHours is the slot time jobs used on the pool.
	SlotHours float64
	// PinnedSlotHours is the slot time an elastic pool's workers had
	// free while a running job that cannot checkpoint kept them up: no
	// rule can repack such a worker, so it is billed until the job ends.
	PinnedSlotHours float64 `json:",omitzero"`
	// ShareRoomSlotHours is the GPU time an elastic pool's workers left
	// unused on GPUs that jobs shared: a GPU holding shares of 0.4 and
	// 0.4 is billed whole and leaves 0.2 of it. Part of it is shares that
	// could not pair up (0.6 and 0.6 need two GPUs), part shares that
	// ended at different times.
	ShareRoomSlotHours float64 `json:",omitzero"`
	// Cost is what the pool cost: a fixed pool's quota × its price × the
	// span, an elastic pool's billed time.
	Cost float64
	// CoreWait and BurstWait are the waits (submit to start) of the core
	// and burst jobs whose run first started on the pool's workers (a
	// gang's first member's), whatever ran them later.
	CoreWait  WaitStats `json:",omitzero"`
	BurstWait WaitStats `json:",omitzero"`
}

// WaitStats is how many waits a set holds and their p95, by the nearest
// rank as Percentiles: enough to hold each pool to a wait target.
type WaitStats struct {
	N   int
	P95 time.Duration
}

// TemplateUsage is the slot time one template's jobs used, the figure a
// capacity planner sizes quota from.
type TemplateUsage struct {
	Template string
	// Jobs counts the template's jobs in the trace.
	Jobs int
	// SlotHours is the slot time its jobs used, lost work and overhead
	// included.
	SlotHours float64
	// SlotHoursPerDay is SlotHours spread over the run's days; ByDay has
	// the slot-hours used on each day, day 0 starting at the trace start.
	SlotHoursPerDay float64
	ByDay           []float64
}
