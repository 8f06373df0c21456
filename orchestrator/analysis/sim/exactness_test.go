package sim

import (
	"reflect"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// runWith runs with the test knobs set.
func runWith(t *testing.T, tr trace.Trace, o Options, alwaysDecide, fullSnapshot bool) Result {
	t.Helper()
	s, err := newSim(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	s.alwaysDecide, s.fullSnapshot = alwaysDecide, fullSnapshot
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	return s.result()
}

// busyOptions exercise every timer the policy reads: per-minute and
// per-hour billing with minimums (release windows), spot launches slower
// than SpotFallbackAfter (fallback), core overflow after a wait, plus
// reclaims, migrations and spot reclaims.
func busyOptions() Options {
	o := benchOptions()
	o.FixedSlots = 25
	o.Config.CoreOverflow, o.Config.CoreMaxWait = true, 5*time.Minute
	o.Config.SpotFallbackAfter = 2 * time.Minute
	o.Pools[1].Billing, o.Pools[1].MinBilling, o.Pools[1].MaxWorkers = policy.BillingPerHour, time.Hour, 6
	o.Pools[2].Billing, o.Pools[2].MinBilling = policy.BillingPerMinute, 10*time.Minute
	o.SpotReclaimRate = 0.5
	return o
}

// Deciding only when something changed or a timer comes due, and leaving
// core work on the quota out of the snapshot, are optimizations: deciding
// on every tick with every job in view must give the very same result.
func TestSkippedTicksAndHiddenJobsChangeNothing(t *testing.T) {
	tr := benchTrace(12_000, 2, 5*time.Minute, 11)
	light := benchOptions()
	light.FixedSlots = 15
	overflow := busyOptions()
	overflow.FixedSlots = 10 // below the core peak: core work waits and overflows
	cases := []struct {
		name string
		o    Options
		want []policy.ActionKind
	}{
		{"light", light, []policy.ActionKind{policy.Reclaim, policy.Migrate, policy.Release}},
		{"busy", busyOptions(), []policy.ActionKind{policy.Reclaim, policy.Migrate, policy.Drain, policy.Release}},
		{"overflow", overflow, []policy.ActionKind{policy.Overflow, policy.Reclaim, policy.Release}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := c.o
			base := runWith(t, tr, o, false, false)
			for _, k := range c.want {
				if base.Actions[k] == 0 {
					t.Fatalf("no %s: the case exercises too little (actions %v)", k, base.Actions)
				}
			}
			if base.Preemptions.Spot == 0 {
				t.Fatalf("no spot reclaim: the case exercises too little")
			}
			for _, k := range []struct{ always, full bool }{{true, false}, {false, true}, {true, true}} {
				r := runWith(t, tr, o, k.always, k.full)
				if k.always && r.Decisions <= base.Decisions {
					t.Errorf("always deciding made %d decisions, skipping %d", r.Decisions, base.Decisions)
				}
				r.Decisions = base.Decisions
				if !reflect.DeepEqual(base, r) {
					t.Errorf("always decide %v, full snapshot %v:\n got %+v\nwant %+v", k.always, k.full, r, base)
				}
			}
			t.Logf("%d decisions for %.0f ticks; actions %v", base.Decisions, base.SimulatedSeconds/10, base.Actions)
		})
	}
}
