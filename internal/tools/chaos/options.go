package chaos

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ballastdev/ballast/internal/config"
)

// Fault is one kind of failure the run injects.
type Fault string

// The faults, in the order a run without --seed shuffling would list them.
const (
	// FaultWorkerKill SIGKILLs a worker process and restarts it after a
	// short delay under a fresh ID; its jobs wait for the controller's
	// dead-worker detection (worker_ttl).
	FaultWorkerKill Fault = "worker-kill"
	// FaultLeaderKill SIGKILLs the leading controller and starts a new one;
	// the standby takes the lease when it lapses.
	FaultLeaderKill Fault = "leader-kill"
	// FaultRedisPause freezes redis-server (SIGSTOP, then SIGCONT), so
	// every client hangs rather than being refused.
	FaultRedisPause Fault = "redis-pause"
	// FaultNATSOutage stops the NATS server and starts it again on the same
	// port with the same JetStream store.
	FaultNATSOutage Fault = "nats-outage"
	// FaultSameID SIGKILLs a worker and restarts it at once under the same
	// --id, well within worker_ttl: the new process's registration must
	// requeue the old one's jobs.
	FaultSameID Fault = "same-id"
	// FaultWorkerPause freezes a worker process (SIGSTOP, not its jobs) for
	// longer than worker_ttl, then wakes it: its jobs are requeued while
	// the attempts it started go on, which at-least-once allows to repeat a
	// side effect; the woken worker must find itself fenced.
	FaultWorkerPause Fault = "worker-pause"
	// FaultForged publishes drain, spot_notice, cancel and preempt messages
	// on every worker's control subject with nothing recorded in Redis:
	// they must change nothing.
	FaultForged Fault = "forged-control"
)

// AllFaults lists every fault kind.
var AllFaults = []Fault{FaultWorkerKill, FaultLeaderKill, FaultRedisPause, FaultNATSOutage, FaultSameID, FaultWorkerPause, FaultForged}

// ParseFaults reads a comma-separated list of fault names ("all" for every
// one).
func ParseFaults(s string) ([]Fault, error) {
	if strings.TrimSpace(s) == "all" {
		return append([]Fault(nil), AllFaults...), nil
	}
	var out []Fault
	seen := map[Fault]bool{}
	for _, name := range strings.Split(s, ",") {
		f := Fault(strings.TrimSpace(name))
		if f == "" {
			continue
		}
		if !known(f) {
			return nil, fmt.Errorf("unknown fault %q (known: %s, or all)", f, faultNames())
		}
		if !seen[f] {
			out = append(out, f)
			seen[f] = true
		}
	}
	return out, nil
}

func known(f Fault) bool {
	for _, k := range AllFaults {
		if k == f {
			return true
		}
	}
	return false
}

func faultNames() string {
	names := make([]string, len(AllFaults))
	for i, f := range AllFaults {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// Options configure a run. The zero value of a field takes its default
// (WithDefaults); Validate names what is wrong.
type Options struct {
	// Binary is the ballast binary the controllers and workers run.
	Binary string
	// Dir holds the run: config, logs, Redis and NATS data, the side-effect
	// file. Empty: a new temporary directory, removed after a passing run
	// unless Keep is set (a failing run's is always kept, for its logs).
	Dir  string
	Keep bool
	// Jobs is how many jobs are submitted (default 1000).
	Jobs int
	// Clients is how many concurrent submitters share them (default 4).
	Clients int
	// Controllers and Workers are how many processes of each run (2 and 3).
	Controllers, Workers int
	// Slots is each worker's slots (default 4).
	Slots int
	// MinWork and MaxWork bound each job's work, drawn uniformly (50 ms to
	// 500 ms).
	MinWork, MaxWork time.Duration
	// Faults are the kinds injected (default all).
	Faults []Fault
	// WorkerKills is how many plain worker SIGKILLs the schedule holds
	// (default 3), when FaultWorkerKill is on.
	WorkerKills int
	// RedisPause and NATSOutage are how long those faults last (3 s each).
	RedisPause, NATSOutage time.Duration
	// WorkerPause is how long a worker is frozen (default worker_ttl + 2 s:
	// past the TTL, so its jobs are requeued under it).
	WorkerPause time.Duration
	// Gap is the quiet time between two faults (default 2 s).
	Gap time.Duration
	// WorkerTTL and LeaderTTL go into the config (defaults: Ballast's own,
	// 4 s and 5 s), so the figures are those of a default installation.
	WorkerTTL, LeaderTTL time.Duration
	// Seed makes the job durations, the fault order and the victims
	// repeatable (default 1).
	Seed uint64
	// Timeout bounds the whole run, start-up to report (default 10 min).
	Timeout time.Duration
	// RequeueLimit is the kill-to-requeue time the verdict allows (5 s).
	RequeueLimit time.Duration
	// Progress receives a line per step and fault; nil: none.
	Progress io.Writer
}

// WithDefaults returns a copy with every unset field filled in.
func (o Options) WithDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	defInt := func(n *int, v int) {
		if *n == 0 {
			*n = v
		}
	}
	defInt(&o.Jobs, 1000)
	defInt(&o.Clients, 4)
	defInt(&o.Controllers, 2)
	defInt(&o.Workers, 3)
	defInt(&o.Slots, 4)
	defInt(&o.WorkerKills, 3)
	def(&o.MinWork, 50*time.Millisecond)
	def(&o.MaxWork, 500*time.Millisecond)
	def(&o.RedisPause, 3*time.Second)
	def(&o.NATSOutage, 3*time.Second)
	def(&o.Gap, 2*time.Second)
	def(&o.WorkerTTL, config.DefaultWorkerTTL)
	def(&o.WorkerPause, o.WorkerTTL+2*time.Second)
	def(&o.LeaderTTL, config.DefaultLeaderTTL)
	def(&o.Timeout, 10*time.Minute)
	def(&o.RequeueLimit, 5*time.Second)
	if o.Faults == nil {
		o.Faults = append([]Fault(nil), AllFaults...)
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

// Validate names every bad option and its fix.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if o.Binary == "" {
		bad("binary: name the ballast binary the processes run")
	}
	if o.Jobs < 1 {
		bad("jobs: %d, want at least 1", o.Jobs)
	}
	if o.Clients < 1 || o.Controllers < 1 || o.Workers < 1 || o.Slots < 1 {
		bad("clients, controllers, workers and slots must be at least 1")
	}
	if o.Workers < 2 && (o.has(FaultWorkerKill) || o.has(FaultSameID) || o.has(FaultWorkerPause)) {
		bad("workers: killing or pausing the only worker leaves nothing to requeue to; use at least 2")
	}
	if o.Controllers < 2 && o.has(FaultLeaderKill) {
		bad("controllers: a leader kill needs a standby; use at least 2")
	}
	if o.MinWork < 0 || o.MaxWork < o.MinWork || o.MaxWork > time.Minute {
		bad("work: want 0 <= min <= max <= 1m, got %s..%s", o.MinWork, o.MaxWork)
	}
	if o.WorkerKills < 0 {
		bad("worker-kills: must not be negative")
	}
	if o.RedisPause < 0 || o.NATSOutage < 0 || o.WorkerPause < 0 || o.Gap < 0 {
		bad("redis-pause, nats-outage, worker-pause and gap must not be negative")
	}
	if o.WorkerTTL < 2*config.DefaultHeartbeat || o.LeaderTTL < 2*config.DefaultTick {
		bad("worker-ttl must be at least %s (two heartbeats) and leader-ttl at least %s (two ticks)",
			2*config.DefaultHeartbeat, 2*config.DefaultTick)
	}
	for _, f := range o.Faults {
		if !known(f) {
			bad("faults: unknown fault %q (known: %s)", f, faultNames())
		}
	}
	if o.Timeout <= 0 || o.RequeueLimit <= 0 {
		bad("timeout and requeue limit must be positive")
	}
	return errors.Join(errs...)
}

func (o Options) has(f Fault) bool {
	for _, x := range o.Faults {
		if x == f {
			return true
		}
	}
	return false
}
