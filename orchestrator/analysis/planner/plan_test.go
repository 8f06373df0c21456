package planner

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
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

func TestPlanRecommendsTheCheapestFeasiblePlanOnTheWholeHistory(t *testing.T) {
	tr := baseAndPeaks()
	var reports []Progress
	var mu sync.Mutex
	p, err := Make(tr, Options{Sim: planSim(), TuneDays: -1, Sweep: SweepOptions{WaitTarget: 10 * time.Minute,
		Watermarks: []Watermarks{{0.7, 0.4}, {0.9, 0.6}},
		Progress:   func(pr Progress) { mu.Lock(); reports = append(reports, pr); mu.Unlock() }}})
	if err != nil {
		t.Fatal(err)
	}
	// Progress: one report a simulation, in order, never expecting fewer
	// than are done.
	if len(reports) != p.Simulations || p.Simulations == 0 {
		t.Fatalf("%d progress reports for %d simulations", len(reports), p.Simulations)
	}
	for i, r := range reports {
		if r.Done != i+1 || r.Expected < r.Done || r.Stage == "" {
			t.Fatalf("report %d: %+v", i, r)
		}
	}
	if p.Peak != 40 || p.BaseLoad != 10 {
		t.Fatalf("peak %d base %.1f, want 40 and 10", p.Peak, p.BaseLoad)
	}
	best := p.Best
	if !best.Feasible || !p.Recommended.Feasible {
		t.Fatalf("no plan met a 10 minute target: best %+v", best)
	}
	// Only the whole history decides, and only among feasible plans.
	strategies := map[Strategy]bool{}
	for _, pt := range p.History {
		strategies[pt.Strategy] = true
		if v := judge(pt.Result, p.WaitTarget); v != pt.Verdict {
			t.Errorf("%s: verdict %+v, judged again %+v", pt.Candidate, pt.Verdict, v)
		}
		if pt.Feasible && pt.Result.Cost.Total < best.Result.Cost.Total-1e-9 {
			t.Errorf("%s costs %.2f on the whole history, less than the pick %s at %.2f", pt.Candidate,
				pt.Result.Cost.Total, best.Candidate, best.Result.Cost.Total)
		}
		// Ten slots of core work around the clock: without overflow, a
		// smaller quota leaves it queued.
		if pt.Strategy == StrategyHybrid && !pt.CoreOverflow && pt.FixedSlots < 10 && pt.Feasible {
			t.Errorf("%s met the target with 10 slots of core work and no overflow", pt.Candidate)
		}
	}
	if !strategies[StrategyAllFixed] || !strategies[StrategyAllElastic] || !strategies[StrategyHybrid] {
		t.Fatalf("the whole history saw strategies %v; all fixed, all elastic and hybrids are candidates", strategies)
	}
	// The pick is a local optimum in the quota: both neighbours with the
	// same settings were simulated on the whole history, and neither is cheaper.
	if best.Strategy == StrategyHybrid {
		for _, q := range []int{best.FixedSlots - 1, best.FixedSlots + 1} {
			if q < 0 || q > p.Peak {
				continue
			}
			c := best.Candidate
			c.FixedSlots = q
			found := false
			for _, pt := range p.History {
				if pt.Candidate == c {
					found = true
				}
			}
			if !found {
				t.Errorf("the neighbour %s of the pick was never simulated on the whole history", c)
			}
		}
	}
	if p.Optimum.Cost <= 0 || p.Recommended.Cost < p.Optimum.Cost-1e-9 {
		t.Fatalf("the pick (%.2f) beats the offline optimum (%.2f), which nothing should", p.Recommended.Cost, p.Optimum.Cost)
	}
	if p.AllFixed.Cost.Total <= p.Recommended.Cost || p.AllElastic.Cost.Total <= p.Recommended.Cost {
		t.Fatalf("all fixed %.2f, all elastic %.2f, the pick %.2f", p.AllFixed.Cost.Total, p.AllElastic.Cost.Total, p.Recommended.Cost)
	}
	if best.FixedSlots < 5 || best.FixedSlots > 20 {
		t.Fatalf("the pick holds %d slots; the base load is 10 and the peak two hours a day", best.FixedSlots)
	}
	got := map[string]Recommendation{}
	for _, r := range p.Recommendations {
		got[r.Method] = r
	}
	if got["rule of thumb"].FixedSlots != 12 || got["cost-optimal"].FixedSlots != 10 || got["offline optimum"].FixedSlots != p.Optimum.FixedSlots {
		t.Fatalf("rule of thumb %d (want 12), cost-optimal %d (want 10), offline optimum %d (want %d)", got["rule of thumb"].FixedSlots,
			got["cost-optimal"].FixedSlots, got["offline optimum"].FixedSlots, p.Optimum.FixedSlots)
	}

	var text, html, js bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rule of thumb", "cost-optimal", "offline optimum", "simulated", "all fixed (peak)", "all elastic", "etl", "train",
		"X OPTIMUM", "FEASIBLE", "verdict: ", "Config: pools.fixed.slots: " + strconv.Itoa(best.FixedSlots)} {
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
	if !strings.Contains(html.String(), "core wait p95") || !strings.Contains(html.String(), "How the pick was made") {
		t.Error("the HTML report lacks core waits or the explanation of the pick")
	}
	if err := json.NewEncoder(&js).Encode(p); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Recommended map[string]any `json:"recommended"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"fixed_slots", "cost", "core_wait_p95_s", "burst_wait_p95_s", "offline_optimum_cost", "core_overflow",
		"core_max_wait_s", "watermarks"} {
		if _, ok := doc.Recommended[k]; !ok {
			t.Errorf("JSON recommended lacks %q: %v", k, doc.Recommended)
		}
	}
	if doc.Recommended["fixed_slots"] != float64(best.FixedSlots) {
		t.Errorf("JSON recommended fixed_slots %v, want %d", doc.Recommended["fixed_slots"], best.FixedSlots)
	}
}

func TestPlanWithoutOverflowNeedsTheCorePeak(t *testing.T) {
	p, err := Make(baseAndPeaks(), Options{Sim: planSim(), TuneDays: -1, WithoutCoreOverflow: true,
		Sweep: SweepOptions{Watermarks: []Watermarks{{0.7, 0.4}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range append(p.Sweep, p.History...) {
		if pt.CoreOverflow {
			t.Fatalf("%s: overflow tried though it was ruled out", pt.Candidate)
		}
	}
	if !p.Best.Feasible || p.Best.Strategy == StrategyHybrid && p.Best.FixedSlots < 10 {
		t.Fatalf("without overflow the pick is %s (feasible %v); core work needs 10 slots", p.Best.Candidate, p.Best.Feasible)
	}
}

func TestLastDaysKeepsJobsRunningIntoTheWindow(t *testing.T) {
	h := time.Hour
	tr := trace.Trace{Name: "w", Jobs: []trace.Job{
		{Submit: 0, Duration: 2 * h, Slots: 1, Class: jobs.ClassBurst},                             // ends before the window
		{Submit: 0, Duration: 30 * 24 * h, Slots: 4, Class: jobs.ClassCore, Deadline: 40 * 24 * h}, // runs through it
		{Submit: 20 * 24 * h, Duration: h, Slots: 2, Class: jobs.ClassBurst},
		{Submit: 24 * 24 * h, Duration: h, Slots: 1, Class: jobs.ClassCore},
	}}
	w := LastDays(tr, 14) // the window starts at day 10
	if len(w.Jobs) != 3 {
		t.Fatalf("window jobs %+v, want the long job and the two in the window", w.Jobs)
	}
	long := w.Jobs[0]
	if long.Submit != 0 || long.Duration != 20*24*h || long.Slots != 4 || long.Deadline != 0 {
		t.Fatalf("the long job in the window: %+v, want its last 20 days from offset 0", long)
	}
	if w.Jobs[1].Submit != 10*24*h || w.Jobs[2].Submit != 14*24*h {
		t.Fatalf("window offsets %v and %v, want 10 and 14 days", w.Jobs[1].Submit, w.Jobs[2].Submit)
	}
	if got := DemandLevels(w).Peak(); got != 6 {
		t.Fatalf("window peak %d, want 6 (the long job's 4 slots beside the 2-slot one)", got)
	}
}
