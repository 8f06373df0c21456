package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/policy"
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
