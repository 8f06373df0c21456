package advisor

import (
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// shapeWindow is a day of one-slot burst work with a 4-slot core job every
// two hours, on a quota of quota slots and one-slot on-demand machines.
func shapeWindow(quota int) Window {
	pools := []policy.Pool{
		{Name: "onprem", Kind: policy.PoolFixed, PricePerSlotHour: 1},
		{Name: "ondemand", Kind: policy.PoolOnDemand, PricePerSlotHour: 2, Billing: policy.BillingPerSecond,
			StartupDelay: 30 * time.Second, IdleTTL: time.Minute, SlotsPerWorker: 1, MaxWorkers: 50},
	}
	tr := trace.Trace{Name: "window"}
	for m := 0; m < 24*60; m += 10 {
		at := time.Duration(m) * time.Minute
		tr.Jobs = append(tr.Jobs, trace.Job{Submit: at, Duration: 20 * time.Minute, Slots: 1, Class: jobs.ClassBurst, Template: "t"})
		if m%120 == 0 {
			tr.Jobs = append(tr.Jobs, trace.Job{Submit: at, Duration: time.Hour, Slots: 4, Class: jobs.ClassCore, Template: "big"})
		}
	}
	trace.SortJobs(tr.Jobs)
	prices, _ := planner.PricesOf(pools, 0)
	return Window{Prices: prices, High: 0.7, Low: 0.4, FixedSlots: quota, Pools: pools, History: tr,
		Shapes: planner.ShapesOf(tr, pools)}
}

func TestShapesWarnOfJobsTheQuotaCannotHoldAndReplayTheFix(t *testing.T) {
	recs := DefaultOptions().shapes(shapeWindow(2))
	if len(recs) != 1 {
		t.Fatalf("%d recommendations, want 1: %+v", len(recs), recs)
	}
	r := recs[0]
	ev := r.Evidence.Shapes
	if r.Kind != KindShapes || r.Severity != SeverityWarn || ev == nil || ev.Jobs != 12 || ev.Slots != 4 || ev.Floor != 4 ||
		ev.LargestElastic != 1 || ev.FixedSlots != 2 {
		t.Fatalf("recommendation %+v, evidence %+v", r, ev)
	}
	for _, want := range []string{"12 jobs need 4 slots on one machine; no elastic pool for them offers more than 1", "they wait for ever"} {
		if !strings.Contains(r.Title, want) {
			t.Errorf("title %q lacks %q", r.Title, want)
		}
	}
	if !ev.NeedsOverflow || !strings.Contains(r.Action, "add an on-demand pool of 4-slot machines and turn on capacity.core_overflow") ||
		!strings.Contains(r.Action, "or keep at least 4 fixed (the quota has 2)") {
		t.Errorf("action: %s", r.Action)
	}
	// Replayed: with the pool of 4-slot machines the big jobs run.
	f := ev.Fix
	if f == nil || f.Pool != "ondemand-4" || f.From != "ondemand" || f.SlotsPerWorker != 4 || f.Jobs != 156 {
		t.Fatalf("fix %+v", f)
	}
	if f.Before.Unfinished != 12 || f.After.Unfinished != 0 || f.After.Cost <= 0 {
		t.Errorf("before %+v, after %+v: the 12 big jobs should run only with the pool", f.Before, f.After)
	}
}

// A quota at the floor runs them: the advice is about cost, not service.
func TestShapesAtTheFloorAreInfo(t *testing.T) {
	recs := DefaultOptions().shapes(shapeWindow(8))
	if len(recs) != 1 || recs[0].Severity != SeverityInfo || strings.Contains(recs[0].Title, "for ever") {
		t.Fatalf("%+v", recs)
	}
}

func TestShapesNameLabelsNoPoolCarries(t *testing.T) {
	w := shapeWindow(8)
	w.History.Jobs[0].Requires = map[string]string{"gpu_model": "H100"}
	w.Shapes = planner.ShapesOf(w.History, w.Pools)
	recs := DefaultOptions().shapes(w)
	if len(recs) != 2 {
		t.Fatalf("%d recommendations, want 2", len(recs))
	}
	r := recs[1]
	if r.Severity != SeverityWarn || !strings.Contains(r.Title, "1 jobs require gpu_model=H100") || r.Evidence.Shapes.Requires["gpu_model"] != "H100" {
		t.Errorf("%+v", r)
	}
}

func TestNoShapeAdviceWhenEveryJobFitsAMachine(t *testing.T) {
	w := shapeWindow(8)
	w.Pools[1].SlotsPerWorker = 4
	w.Shapes = planner.ShapesOf(w.History, w.Pools)
	if recs := DefaultOptions().shapes(w); len(recs) != 0 {
		t.Errorf("%+v", recs)
	}
}

// With a quota per flavor the replay runs each flavor's quota, and the
// pool it suggests carries the labels of the jobs it is for.
func TestShapesReplayAFleetOfFlavors(t *testing.T) {
	t4 := map[string]string{"gpu_model": "T4"}
	pools := []policy.Pool{
		{Name: "a100", Kind: policy.PoolFixed, PricePerSlotHour: 3, Labels: map[string]string{"gpu_model": "A100"}},
		{Name: "t4", Kind: policy.PoolFixed, PricePerSlotHour: 1, Labels: t4},
		{Name: "od-t4", Kind: policy.PoolOnDemand, PricePerSlotHour: 2, Billing: policy.BillingPerSecond,
			StartupDelay: 30 * time.Second, IdleTTL: time.Minute, SlotsPerWorker: 1, MaxWorkers: 50, Labels: t4},
	}
	tr := trace.Trace{Name: "window"}
	for m := 0; m < 12*60; m += 20 {
		at := time.Duration(m) * time.Minute
		tr.Jobs = append(tr.Jobs, trace.Job{Submit: at, Duration: 20 * time.Minute, Slots: 1, Class: jobs.ClassBurst, Requires: t4})
		if m%120 == 0 {
			tr.Jobs = append(tr.Jobs, trace.Job{Submit: at, Duration: time.Hour, Slots: 4, Class: jobs.ClassCore, Requires: t4})
		}
	}
	trace.SortJobs(tr.Jobs)
	prices, _ := planner.PricesOf(pools, 0)
	w := Window{Prices: prices, High: 0.7, Low: 0.4, FixedSlots: 6, Pools: pools, Quotas: map[string]int{"a100": 4, "t4": 2},
		History: tr, Shapes: planner.ShapesOf(tr, pools)}
	recs := DefaultOptions().shapes(w)
	if len(recs) != 1 || recs[0].Evidence.Shapes == nil {
		t.Fatalf("%+v", recs)
	}
	f := recs[0].Evidence.Shapes.Fix
	if f == nil || f.Pool != "od-t4-4" || f.From != "od-t4" {
		t.Fatalf("fix %+v", f)
	}
	if f.Before.Unfinished != 6 || f.After.Unfinished != 0 {
		t.Errorf("before %+v, after %+v: the six 4-GPU T4 jobs should run only with the pool", f.Before, f.After)
	}
}
