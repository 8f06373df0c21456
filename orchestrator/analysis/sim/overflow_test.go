package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// A template's own max wait overflows its core jobs when the global one
// would hold them, as a template's core_max_wait does live.
func TestCoreMaxWaitByTemplate(t *testing.T) {
	urgent := coreJob(time.Minute, 10*time.Minute)
	urgent.Template = "urgent"
	tr := mkTrace(coreJob(0, 20*time.Minute), urgent, coreJob(time.Minute, 10*time.Minute))
	o := Options{Pools: []policy.Pool{quota(1), onDemand(3, 1)}, FixedSlots: 1, Tick: time.Second}
	o.Config = policy.DefaultConfig()
	o.Config.CoreOverflow = true // global wait 30m: the quota frees at 20m, so nothing overflows

	if r := mustRun(t, tr, o); r.Actions[policy.Overflow] != 0 {
		t.Fatalf("global wait only: %d overflows, want 0", r.Actions[policy.Overflow])
	}
	o.CoreMaxWaitByTemplate = map[string]time.Duration{"urgent": 0}
	r := mustRun(t, tr, o)
	if r.Actions[policy.Overflow] != 1 {
		t.Fatalf("urgent at once: %d overflows, want 1 (actions %v)", r.Actions[policy.Overflow], r.Actions)
	}
	// It started on on-demand after the pool's start-up delay, not after the
	// quota freed at 20m.
	if od := pool(t, r, "od"); od.SlotHours <= 0 {
		t.Fatalf("on-demand pool unused: %+v", od)
	}
	o.CoreMaxWaitByTemplate = map[string]time.Duration{"urgent": -time.Second}
	if _, err := Run(tr, o); err == nil || !strings.Contains(err.Error(), "core_max_wait_by_template[urgent]") {
		t.Fatalf("a negative wait: %v", err)
	}
}

// A core job with a deadline overflows at its latest start (deadline less
// its duration, less the lead on-demand capacity takes), as a pipeline step
// with a deadline does live, and so finishes in time; without the deadline
// it waits for the quota, past the deadline.
func TestADeadlineOverflowsAtTheLatestStart(t *testing.T) {
	due := coreJob(time.Minute, 10*time.Minute)
	due.Deadline = 25 * time.Minute // latest start 26m - 10m - (3m + 2s) = 12m58s after the trace start
	o := Options{Pools: []policy.Pool{quota(1), onDemand(3, 1)}, FixedSlots: 1, Tick: time.Second}
	o.Config = policy.DefaultConfig()
	o.Config.CoreOverflow = true // the global 30m would hold it until the quota frees at 30m

	r := mustRun(t, mkTrace(coreJob(0, 30*time.Minute), due), o)
	if r.Actions[policy.Overflow] != 1 || r.DeadlineMisses != 0 {
		t.Fatalf("with a deadline: %d overflows and %d misses, want 1 and 0", r.Actions[policy.Overflow], r.DeadlineMisses)
	}
	// Waited from 1m to its latest start (within a tick), then the
	// on-demand start-up: 11m58s + 3m.
	if w := r.CoreWait.Max; w < 14*time.Minute+57*time.Second || w > 15*time.Minute {
		t.Fatalf("core wait %v, want about 14m58s", w)
	}
	due.Deadline = 0
	if r := mustRun(t, mkTrace(coreJob(0, 30*time.Minute), due), o); r.Actions[policy.Overflow] != 0 {
		t.Fatalf("without a deadline: %d overflows, want 0", r.Actions[policy.Overflow])
	}
}

// A deadline only makes a core job overflow sooner: a latest start further
// away than the global wait leaves the global in force.
func TestADeadlineNeverDelaysAnOverflow(t *testing.T) {
	due := coreJob(time.Minute, 10*time.Minute)
	due.Deadline = 10 * time.Hour
	o := Options{Pools: []policy.Pool{quota(1), onDemand(3, 1)}, FixedSlots: 1, Tick: time.Second}
	o.Config = policy.DefaultConfig()
	o.Config.CoreOverflow, o.Config.CoreMaxWait = true, 0
	r := mustRun(t, mkTrace(coreJob(0, 30*time.Minute), due), o)
	// At once: a tick to see it, then the on-demand start-up.
	if r.Actions[policy.Overflow] != 1 || r.CoreWait.Max > 3*time.Minute+2*time.Second {
		t.Fatalf("%d overflows, core wait %v: want 1 and the start-up only", r.Actions[policy.Overflow], r.CoreWait.Max)
	}
}
