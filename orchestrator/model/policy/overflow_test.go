package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestOverflow(t *testing.T) {
	core, burst := jobs.ClassCore, jobs.ClassBurst
	fxp, fxw := fixedWith(4, 4)
	pools := append(fxp,
		elasticPool("sp", PoolSpot, "eu", 0.2), // cheapest, never for core
		elasticPool("od-eu", PoolOnDemand, "eu", 1.2),
		elasticPool("od-us", PoolOnDemand, "us", 0.9))
	on := func(s Snapshot) Snapshot { s.Config.CoreOverflow = true; return s }
	c := func(id string, waited time.Duration, region string) Job {
		j := queued(id, core, QueueCore, ago(waited))
		j.Region = region
		return j
	}
	borrowed := running("b1", burst, fxw[0], ago(time.Minute))

	runCases(t, []planCase{
		{"off by default", snap(pools, fxw, c("c1", time.Hour, "")), t0, ""},
		{"a long wait goes to the cheapest on-demand pool, never spot", on(snap(pools, fxw, c("c1", 31*time.Minute, ""))), t0,
			"overflow(c1,od-us) scale_up(od-us,1)"},
		{"the pinned region is honoured", on(snap(pools, fxw, c("c1", 31*time.Minute, "eu"))), t0,
			"overflow(c1,od-eu) scale_up(od-eu,1)"},
		{"a short wait stays", on(snap(pools, fxw, c("c1", 29*time.Minute, ""))), t0, ""},
		{"reclaim comes first", on(snap(pools, fxw, borrowed, c("c1", time.Hour, ""))), t0, "reclaim(b1,f1) scale_up(sp,1)"},
		// The reclaimed slot goes to the head of the core queue (c2, the
		// longest wait): fixed workers take core work in queue order, so
		// overflowing c2 would pay on-demand for a job the slot is about to
		// take, and leave c1 waiting. The rest overflow in queue order.
		{"only what reclaim cannot place overflows, and not the job the reclaim serves",
			on(snap(pools, fxw, borrowed, c("c1", 40*time.Minute, ""), c("c2", time.Hour, ""), c("c3", 35*time.Minute, ""))), t0,
			"reclaim(b1,f1) overflow(c1,od-us) overflow(c3,od-us) scale_up(od-us,1) scale_up(sp,1)"},
	})
}

// TestOverflowPerJobWait: a job's own wait replaces the global one, either
// way, and zero means at once; the global switch still rules.
func TestOverflowPerJobWait(t *testing.T) {
	fxp, fxw := fixedWith(4, 4)
	pools := append(fxp, elasticPool("od", PoolOnDemand, "", 1.2))
	on := func(s Snapshot) Snapshot { s.Config.CoreOverflow = true; return s }
	c := func(id string, waited time.Duration, own *time.Duration) Job {
		j := queued(id, jobs.ClassCore, QueueCore, ago(waited))
		if own != nil {
			j.MaxWait, j.HasMaxWait = *own, true
		}
		return j
	}
	d := func(v time.Duration) *time.Duration { return &v }

	runCases(t, []planCase{
		{"a shorter own wait overflows before the global 30m", on(snap(pools, fxw, c("c1", 6*time.Minute, d(5*time.Minute)))), t0,
			"overflow(c1,od) scale_up(od,1)"},
		{"a longer own wait holds past the global 30m", on(snap(pools, fxw, c("c1", time.Hour, d(2*time.Hour)))), t0, ""},
		{"zero means at once", on(snap(pools, fxw, c("c1", 0, d(0)))), t0, "overflow(c1,od) scale_up(od,1)"},
		{"the own wait is reached exactly", on(snap(pools, fxw, c("c1", 5*time.Minute, d(5*time.Minute)))), t0,
			"overflow(c1,od) scale_up(od,1)"},
		{"without an own wait the global applies", on(snap(pools, fxw, c("c1", 6*time.Minute, nil))), t0, ""},
		{"an own wait without the switch changes nothing", snap(pools, fxw, c("c1", time.Hour, d(0))), t0, ""},
		{"own waits order nothing: longest queued first",
			on(snap(pools, fxw, c("c1", 10*time.Minute, d(0)), c("c2", 40*time.Minute, nil))), t0,
			"overflow(c2,od) overflow(c1,od) scale_up(od,1)"},
	})
}

func TestValidateRefusesANegativeOwnWait(t *testing.T) {
	fxp, fxw := fixedWith(4, 4)
	j := queued("c1", jobs.ClassCore, QueueCore, t0)
	j.MaxWait, j.HasMaxWait = -time.Second, true
	err := snap(fxp, fxw, j).Validate()
	if err == nil || !strings.Contains(err.Error(), "jobs[c1].max_wait") {
		t.Fatalf("Validate = %v, want a problem at jobs[c1].max_wait", err)
	}
}

// A sized core job that no fixed worker can ever hold is not served by the
// free fixed slots: it overflows once it has waited, where it used to count
// as the head those slots would take and wait for ever.
func TestOverflowASizedJobTheQuotaCannotHold(t *testing.T) {
	fxp, fxw := fixedWith(2, 0)
	pools := append(fxp, elasticPool("od", PoolOnDemand, "", 1.2))
	on := func(s Snapshot) Snapshot { s.Config.CoreOverflow = true; return s }
	big := func(id string, slots int) Job {
		j := queued(id, jobs.ClassCore, QueueCore, ago(31*time.Minute))
		j.Slots = slots
		return j
	}
	runCases(t, []planCase{
		{"too big for the quota: overflows", on(snap(pools, fxw, big("c1", 4))), t0, "overflow(c1,od) scale_up(od,1)"},
		{"the quota holds it: the free slots serve it", on(snap(pools, fxw, big("c1", 2))), t0, "place(c1)"},
	})
}

// Free fixed slots of another flavor serve no core job: a 4-slot T4 job
// overflows once it has waited, though the idle A100 worker has four free
// slots and the count alone says no slot is short.
func TestOverflowAJobOnlyAnotherFlavorHasRoomFor(t *testing.T) {
	pools := []Pool{fixedPool("fx", "eu"), elasticPool("od", PoolOnDemand, "", 1.2)}
	pools[1].Labels = map[string]string{"gpu_model": "T4"}
	a100, t4 := worker("a100", "fx", 4, 0), worker("t4", "fx", 2, 0)
	a100.Labels, t4.Labels = map[string]string{"gpu_model": "A100"}, map[string]string{"gpu_model": "T4"}
	on := func(s Snapshot) Snapshot { s.Config.CoreOverflow = true; return s }
	j := queued("c1", jobs.ClassCore, QueueCore, ago(31*time.Minute))
	j.Slots, j.Requires = 4, map[string]string{"gpu_model": "T4"}
	runPlaceCases(t, []planCase{
		{"no fixed worker holds it: it overflows", on(snap(pools, []Worker{a100, t4}, j)), t0, "overflow(c1,od) scale_up(od,1)"},
	})
}

// TestOverflowThenDrainIsOnePlan: a core job sent to overflow leaves the
// quota idle, so the drain that allows comes in the same plan, not the
// next: a plan is a fixed point of its own outcome (found by
// TestPropertySizedPlans with a gang on a one-slot quota).
func TestOverflowThenDrainIsOnePlan(t *testing.T) {
	fxp, fxw := fixedWith(1, 0)
	od := elasticPool("od", PoolOnDemand, "eu", 1.2)
	od.SlotsPerWorker = 1
	dear := elasticPool("dear", PoolOnDemand, "eu", 2.0)
	dear.SlotsPerWorker = 1
	pools := append(fxp, od, dear)
	e1 := worker("e1", "dear", 1, 0)
	held := running("b1", jobs.ClassBurst, e1, ago(time.Minute))
	held.Checkpointable = false // it finishes where it is
	gang := queued("g1", jobs.ClassCore, QueueCore, ago(time.Hour))
	gang.Replicas = 2
	s := snap(pools, []Worker{fxw[0], e1}, held, gang)
	s.Config.CoreOverflow = true
	mustValid(t, s)
	p := Decide(s, t0)
	if p.Count(Overflow) != 1 || p.Count(Drain) != 1 {
		t.Fatalf("want the gang overflowed and e1 drained in one plan, got\n%s", p)
	}
	if next := Decide(Apply(s, p, t0), t0); !next.Empty() {
		t.Fatalf("not a fixed point: after\n%s\nthe next plan is\n%s", p, next)
	}
}
