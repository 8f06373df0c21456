package planner

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// hourlyBacklog is a day of 6 core jobs of 50 minutes and 10 burst jobs of
// 30 minutes every hour: core work needs about 5 fixed slots, and below
// that its queue only grows.
func hourlyBacklog() trace.Trace {
	var tr trace.Trace
	for h := range 24 {
		at := time.Duration(h) * time.Hour
		for range 6 {
			tr.Jobs = append(tr.Jobs, trace.Job{Submit: at, Duration: 50 * time.Minute, Slots: 1, Class: jobs.ClassCore, Template: "core"})
		}
		for i := range 10 {
			tr.Jobs = append(tr.Jobs, trace.Job{Submit: at + time.Duration(i)*time.Minute, Duration: 30 * time.Minute, Slots: 1,
				Class: jobs.ClassBurst, Template: "burst", Checkpointable: i%2 == 0})
		}
	}
	trace.SortJobs(tr.Jobs)
	return tr
}

// Stopped runs cover only part of the trace, so their cost is no guide:
// the search must climb out of hopeless quotas towards feasible ones, not
// settle on the one that gave up soonest.
func TestTheQuotaSearchClimbsOutOfHopelessQuotas(t *testing.T) {
	tr := hourlyBacklog()
	ev := newEvaluator(tr, tr, planSim(), 10*time.Minute, 0, nil)
	for _, start := range []int{0, 2, 3, 4} {
		c := Candidate{Strategy: StrategyHybrid, Watermarks: designWatermarks()}
		got, err := ev.searchQuota("test", c, start, 1, 16)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Feasible {
			t.Errorf("from quota %d the search ends at %d, infeasible (%s)", start, got.FixedSlots, got.Why)
		}
	}
}

// A trace of core work only has no burst waits to miss the target.
func TestPlanOnOneClassOnly(t *testing.T) {
	var tr trace.Trace
	for _, j := range hourlyBacklog().Jobs {
		if j.Class == jobs.ClassCore {
			tr.Jobs = append(tr.Jobs, j)
		}
	}
	p, err := Make(tr, Options{Sim: planSim(), TuneDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Recommended.Feasible || p.Recommended.Cost <= 0 {
		t.Fatalf("a core-only trace: %s", p.VerdictLine())
	}
}
