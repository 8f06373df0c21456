package planner

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Jobs of a model the fleet rents but buys no quota of count in the
// fleet's optimum at the elastic price, in that pool's machines: the
// optimum used to leave them out, and so was the optimum of fewer jobs
// than the plans held against it ran. Jobs a fixed flavor carries are
// that flavor's, and jobs no pool carries run nowhere: neither counts.
func TestTheFlavorsOptimumPricesJobsOnlyElasticPoolsCarry(t *testing.T) {
	o := twoFlavors()
	g3 := policy.Pool{Name: "od-g3", Kind: policy.PoolOnDemand, PricePerSlotHour: 2, Billing: policy.BillingPerSecond,
		SlotsPerWorker: 8, MaxWorkers: 10, Labels: map[string]string{"gpu_model": "G3"}}
	pools := append(o.Pools, g3)
	base := twoModels(1)
	tr := base
	tr.Jobs = slices.Clone(base.Jobs)
	for i := range 10 {
		// Ten hours of one G3 GPU, one at a time, and a job of a model
		// no pool carries.
		tr.Jobs = append(tr.Jobs,
			trace.Job{Submit: time.Duration(i) * 2 * time.Hour, Duration: time.Hour, Slots: 1, Class: jobs.ClassCore,
				Template: "g3", Requires: map[string]string{"gpu_model": "G3"}},
			trace.Job{Submit: time.Duration(i) * 2 * time.Hour, Duration: time.Hour, Slots: 1, Class: jobs.ClassCore,
				Template: "h100", Requires: map[string]string{"gpu_model": "H100"}})
	}
	trace.SortJobs(tr.Jobs)
	prices := Prices{FixedPerSlotHour: 1, ElasticPerSlotHour: 1.5}

	x := elasticOnlyOf(tr, Flavors(pools), pools, prices.FixedPerSlotHour)
	if x.Jobs != 10 {
		t.Fatalf("elastic-only jobs = %d, want the 10 G3 jobs", x.Jobs)
	}
	// Each hour of one GPU rents a whole 8-GPU machine at 2 a GPU-hour.
	if want := 10 * 8 * 2.0; math.Abs(x.Cost-want) > 1e-6 {
		t.Errorf("cost in machines = %.3f, want %.3f", x.Cost, want)
	}
	if want := 10 * 2.0; math.Abs(x.PerSlot-want) > 1e-6 {
		t.Errorf("cost per slot = %.3f, want %.3f", x.PerSlot, want)
	}

	// The fleet's optimum is the flavors' on the rest, plus these.
	without, _ := flavorOptima(flavorsOf(base, pools, prices), pools)
	with, _ := flavorOptima(flavorsOf(tr, pools, prices), pools)
	x.addTo(&with)
	if math.Abs(with.Cost-(without.Cost+x.Cost)) > 1e-6 || with.ElasticOnly != x.Cost {
		t.Errorf("optimum %.3f (elastic only %.3f), want %.3f + %.3f", with.Cost, with.ElasticOnly, without.Cost, x.Cost)
	}
	if with.WithoutShapes == nil || with.WithoutShapes.Cost > with.Cost-x.Cost+x.PerSlot+1e-6 {
		t.Errorf("without shapes the G3 hours cost per slot: %+v", with.WithoutShapes)
	}

	// And the plan reports the optimum with them.
	o.Pools = pools
	p, err := Make(tr, Options{Sim: o, Sweep: SweepOptions{WaitTarget: 10 * time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.Optimum.ElasticOnly-x.Cost) > 1e-6 {
		t.Errorf("the plan's optimum counts %.3f for elastic-only jobs, want %.3f", p.Optimum.ElasticOnly, x.Cost)
	}
	// The closed form of the optimum's own split is the optimum, these
	// jobs included.
	for _, r := range p.Recommendations {
		if r.Method == "offline optimum" && math.Abs(r.ClosedForm-p.Optimum.Cost) > 1e-6 {
			t.Errorf("closed form at the optimum's quotas %.3f, want the optimum %.3f", r.ClosedForm, p.Optimum.Cost)
		}
	}
}
