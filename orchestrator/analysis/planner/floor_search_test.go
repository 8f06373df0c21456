package planner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// bigJobsTrace is two days of one-slot core and burst work arriving at
// random, with 4-slot core jobs and 4-slot checkpointable burst jobs among
// them, which no one-slot elastic machine can hold.
func bigJobsTrace(seed uint64) trace.Trace {
	r := rand.New(rand.NewPCG(seed, 11))
	tr := trace.Trace{Name: fmt.Sprintf("big-jobs-%d", seed)}
	for at := time.Duration(0); at < 48*time.Hour; at += time.Duration(r.IntN(20)+1) * time.Minute {
		j := trace.Job{Submit: at, Duration: time.Duration(20+r.IntN(100)) * time.Minute, Slots: 1, Class: jobs.ClassCore, Template: "etl"}
		if r.IntN(2) == 0 {
			j.Class, j.Template, j.Checkpointable = jobs.ClassBurst, "train", true
		}
		if r.IntN(12) == 0 {
			j.Slots = 4
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	trace.SortJobs(tr.Jobs)
	return tr
}

// oneSlotMachines prices on-demand machines of one slot at elastic per
// slot-hour against a fixed price of 1.
func oneSlotMachines(elastic float64) sim.Options {
	return sim.Options{FixedPricePerSlotHour: 1, Tick: 10 * time.Second, Seed: 1,
		Pools: []policy.Pool{{Name: "ondemand", Kind: policy.PoolOnDemand, PricePerSlotHour: elastic, Billing: policy.BillingPerSecond,
			MinBilling: time.Minute, StartupDelay: 2 * time.Second, IdleTTL: 15 * time.Second, SlotsPerWorker: 1, MaxWorkers: 500}}}
}

// The plan must be feasible and as cheap as a brute force over every quota,
// overflow setting and watermark pair finds, at several price ratios:
// jobs bigger than every elastic machine set a floor the search must start
// from, and plans with overflow must be searched on the whole history too.
func TestThePickMatchesABruteForceOverQuotaAndOverflowWait(t *testing.T) {
	tr := bigJobsTrace(1)
	target := 10 * time.Minute
	for _, ratio := range []float64{0.4, 0.55, 0.7, 0.85} {
		t.Run(fmt.Sprintf("ratio %.2f", ratio), func(t *testing.T) {
			o := oneSlotMachines(1 / ratio)
			p, err := Make(tr, Options{Sim: o, TuneDays: -1, Sweep: SweepOptions{WaitTarget: target}})
			if err != nil {
				t.Fatal(err)
			}
			if !p.Recommended.Feasible {
				t.Fatalf("no feasible pick: %s", p.VerdictLine())
			}
			if p.Optimum.Floor != 4 {
				t.Errorf("the optimum's floor is %d, want 4 (the 4-slot jobs)", p.Optimum.Floor)
			}
			if p.Best.FixedSlots < p.Shapes.Floor(p.Best.CoreOverflow, p.Best.Watermarks.High) {
				t.Errorf("the pick's quota %d is under its floor", p.Best.FixedSlots)
			}
			ev := newEvaluator(tr, tr, o, target, 0, nil)
			var settings []Candidate
			for _, m := range DefaultWatermarks {
				settings = append(settings, Candidate{Strategy: StrategyHybrid, Watermarks: m})
				for _, w := range overflowWaits(target, o) {
					settings = append(settings, Candidate{Strategy: StrategyHybrid, Watermarks: m, CoreOverflow: true, CoreMaxWait: w})
				}
			}
			var all []Candidate
			for _, c := range settings {
				for q := 0; q <= p.Peak; q++ {
					c.FixedSlots = q
					all = append(all, c)
				}
			}
			pts, err := ev.eval(all...)
			if err != nil {
				t.Fatal(err)
			}
			brute := slices.MinFunc(pts, better)
			t.Logf("pick %s at %.2f (%.3fx the optimum); brute force %s at %.2f", p.Best.Candidate, p.Recommended.Cost,
				p.Recommended.OfOptimum, brute.Candidate, brute.Result.Cost.Total)
			if p.Recommended.Cost > brute.Result.Cost.Total*1.01 {
				t.Errorf("the pick %s costs %.2f, more than 1%% over the brute force's %s at %.2f",
					p.Best.Candidate, p.Recommended.Cost, brute.Candidate, brute.Result.Cost.Total)
			}
		})
	}
}
