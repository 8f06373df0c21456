package planner

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/orchestrator/sim"
	"github.com/ballastdev/ballast/orchestrator/trace"
)

// baseAndPeaks is 10 slots of core work around the clock and, each day,
// 30 slots of checkpointable burst work for two hours, over three days.
func baseAndPeaks() trace.Trace {
	tr := trace.Trace{Name: "base-and-peaks"}
	for h := 0; h < 72; h++ {
		for s := 0; s < 10; s++ {
			tr.Jobs = append(tr.Jobs, trace.Job{Submit: time.Duration(h) * time.Hour, Duration: time.Hour, Slots: 1,
				Class: jobs.ClassCore, Template: "etl", Team: "data"})
		}
		if h%24 == 12 || h%24 == 13 {
			for s := 0; s < 30; s++ {
				tr.Jobs = append(tr.Jobs, trace.Job{Submit: time.Duration(h) * time.Hour, Duration: time.Hour, Slots: 1,
					Class: jobs.ClassBurst, Template: "train", Team: "ml", Checkpointable: true})
			}
		}
	}
	trace.SortJobs(tr.Jobs)
	return tr
}

func planSim() sim.Options {
	return sim.Options{FixedPricePerSlotHour: 1, Tick: 10 * time.Second, Seed: 1,
		Pools: []policy.Pool{{Name: "ondemand", Kind: policy.PoolOnDemand, PricePerSlotHour: 3, Billing: policy.BillingPerSecond,
			MinBilling: time.Minute, StartupDelay: 2 * time.Minute, MaxWorkers: 100, SlotsPerWorker: 1, IdleTTL: 5 * time.Minute}}}
}

func TestPlanGivesThreeAnswersAndTheSimulatedOneIsTheCheapestWithinTarget(t *testing.T) {
	tr := baseAndPeaks()
	var reported []int
	var mu sync.Mutex
	p, err := Make(tr, Options{Sim: planSim(), TuneDays: -1, Sweep: SweepOptions{WaitTarget: 10 * time.Minute,
		Quotas: []int{0, 5, 10, 12, 20, 40}, Watermarks: []Watermarks{{0.7, 0.4}, {0.9, 0.6}},
		Progress: func(done, total int) { mu.Lock(); reported = append(reported, done*100+total); mu.Unlock() }}})
	if err != nil {
		t.Fatal(err)
	}
	if len(reported) != 12 || !slices.Contains(reported, 12*100+12) {
		t.Fatalf("progress reports %v, want 12 ending at 12 of 12", reported)
	}
	if p.Peak != 40 || p.BaseLoad != 10 {
		t.Fatalf("peak %d base %.1f, want 40 and 10", p.Peak, p.BaseLoad)
	}
	got := map[string]Recommendation{}
	for _, r := range p.Recommendations {
		got[r.Method] = r
	}
	if got["rule of thumb"].FixedSlots != 12 || got["cost-optimal"].FixedSlots != 10 {
		t.Fatalf("rule of thumb %d (want 12), cost-optimal %d (want 10)", got["rule of thumb"].FixedSlots, got["cost-optimal"].FixedSlots)
	}
	best := p.Best
	if !best.MeetsTarget {
		t.Fatalf("no point met a 10 minute target: best %+v", best)
	}
	for _, pt := range p.Sweep {
		if pt.MeetsTarget && pt.Result.Cost.Total < best.Result.Cost.Total {
			t.Fatalf("quota %d at %v costs %.2f, less than the pick (%d, %.2f)", pt.FixedSlots, pt.Watermarks,
				pt.Result.Cost.Total, best.FixedSlots, best.Result.Cost.Total)
		}
		// Core work needs ten fixed slots: below that it queues for hours.
		if pt.FixedSlots < 10 && pt.MeetsTarget {
			t.Fatalf("quota %d met the target with 10 slots of core work", pt.FixedSlots)
		}
	}
	if best.FixedSlots < 10 || best.FixedSlots > 20 {
		t.Fatalf("the simulated pick holds %d slots; the base load is 10 and the peak two hours a day", best.FixedSlots)
	}
	sim := got["simulated"].Simulated
	if p.AllFixed.Cost.Total <= sim.Cost.Total || p.AllFixed.FixedSlots != 40 {
		t.Fatalf("all fixed (%d slots) costs %.2f, the simulated plan %.2f", p.AllFixed.FixedSlots, p.AllFixed.Cost.Total, sim.Cost.Total)
	}
	if p.AllElastic.Cost.Fixed != 0 || p.AllElastic.Cost.Total <= sim.Cost.Total {
		t.Fatalf("all elastic costs %.2f, the simulated plan %.2f", p.AllElastic.Cost.Total, sim.Cost.Total)
	}

	var text, html bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rule of thumb", "cost-optimal", "simulated", "all fixed (peak)", "all elastic", "etl", "train"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, text.String())
		}
	}
	if err := p.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(html.String(), "<svg"); n != 3 {
		t.Errorf("the HTML report has %d charts, want 3", n)
	}
}
