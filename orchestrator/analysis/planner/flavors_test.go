package planner

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// twoModels is two days of work that requires A100s (one, four or eight on
// a machine) or T4s (one), arriving at random.
func twoModels(seed uint64) trace.Trace {
	r := rand.New(rand.NewPCG(seed, 5))
	a100, t4 := map[string]string{"gpu_model": "A100"}, map[string]string{"gpu_model": "T4"}
	tr := trace.Trace{Name: "two-models"}
	for at := time.Duration(0); at < 48*time.Hour; at += time.Duration(r.IntN(12)+1) * time.Minute {
		j := trace.Job{Submit: at, Duration: time.Duration(20+r.IntN(100)) * time.Minute, Slots: 1, Class: jobs.ClassBurst,
			Template: "t4", Requires: t4, Checkpointable: true}
		if r.IntN(3) == 0 {
			j.Class, j.Checkpointable = jobs.ClassCore, false
		}
		if r.IntN(2) == 0 {
			j.Requires, j.Template = a100, "a100"
			j.Slots = []int{1, 1, 4, 8}[r.IntN(4)]
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	trace.SortJobs(tr.Jobs)
	return tr
}

// twoFlavors is a fleet that buys A100s on 8-GPU machines and T4s on
// 4-GPU machines, with an on-demand pool of each model.
func twoFlavors() sim.Options {
	od := func(name, model string, size int, price float64) policy.Pool {
		return policy.Pool{Name: name, Kind: policy.PoolOnDemand, PricePerSlotHour: price, Billing: policy.BillingPerSecond,
			MinBilling: time.Minute, StartupDelay: 30 * time.Second, IdleTTL: time.Minute, SlotsPerWorker: size, MaxWorkers: 200,
			Labels: map[string]string{"gpu_model": model}}
	}
	return sim.Options{Tick: 10 * time.Second, Seed: 1, Pools: []policy.Pool{
		{Name: "a100", Kind: policy.PoolFixed, PricePerSlotHour: 3, SlotsPerWorker: 8, Labels: map[string]string{"gpu_model": "A100"}},
		{Name: "t4", Kind: policy.PoolFixed, PricePerSlotHour: 1, SlotsPerWorker: 4, Labels: map[string]string{"gpu_model": "T4"}},
		od("od-a100", "A100", 8, 4.2),
		od("od-t4", "T4", 1, 1.5),
	}}
}

// With a fixed pool per model the plan gives each its own quota, and each
// is the best for its pool, the others held, within one slot of a brute
// force over that pool.
func TestAQuotaPerFlavorMatchesABruteForceOverEachPool(t *testing.T) {
	tr := twoModels(1)
	o := twoFlavors()
	target := 10 * time.Minute
	p, err := Make(tr, Options{Sim: o, Sweep: SweepOptions{WaitTarget: target}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Recommended.Feasible || p.Best.Split == "" {
		t.Fatalf("no feasible quota per flavor: %s", p.VerdictLine())
	}
	pick := quotasOf(p.Best.Split)
	if len(pick) != 2 || pick[0].Pool != "a100" || pick[1].Pool != "t4" || pick.Total() != p.Best.FixedSlots {
		t.Fatalf("split %q", p.Best.Split)
	}
	ev := newEvaluator(tr, tr, flavorBase(o, Flavors(o.Pools)), target, 0, nil)
	for i, part := range flavorDemand(tr, Flavors(o.Pools)) {
		var cs []Candidate
		for n := 0; n <= DemandLevels(part).Peak()+2; n++ {
			cs = append(cs, p.Best.Candidate.withSplit(pick.With(i, n)))
		}
		pts, err := ev.eval(cs...)
		if err != nil {
			t.Fatal(err)
		}
		brute := slices.MinFunc(pts, better)
		got, want := pick[i].Slots, quotasOf(brute.Split)[i].Slots
		t.Logf("%s: pick %d at %.2f, brute force %d at %.2f", pick[i].Pool, got, p.Recommended.Cost, want, brute.Result.Cost.Total)
		if (got-want > 1 || want-got > 1) && brute.Result.Cost.Total < p.Recommended.Cost*(1-1e-9) {
			t.Errorf("%s: the pick's quota %d is more than a slot from the brute force's %d (%.2f against %.2f)",
				pick[i].Pool, got, want, p.Recommended.Cost, brute.Result.Cost.Total)
		}
	}
	// The answer pool by pool: each flavor's quota, every pool's cost.
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Recommended struct {
			Cost  float64 `json:"cost"`
			Pools []struct {
				Pool       string            `json:"pool"`
				Labels     map[string]string `json:"labels"`
				FixedSlots int               `json:"fixed_slots"`
				Cost       float64           `json:"cost"`
				CoreP95    *float64          `json:"core_wait_p95_s"`
				BurstP95   *float64          `json:"burst_wait_p95_s"`
			} `json:"pools"`
		} `json:"recommended"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, ps := range back.Recommended.Pools {
		sum += ps.Cost
		if ps.CoreP95 == nil || ps.BurstP95 == nil {
			t.Errorf("pool %s lacks its waits", ps.Pool)
		}
		for _, q := range pick {
			if q.Pool == ps.Pool && (ps.FixedSlots != q.Slots || ps.Labels["gpu_model"] == "") {
				t.Errorf("pool %s: %d fixed slots, labels %v; the pick is %d", ps.Pool, ps.FixedSlots, ps.Labels, q.Slots)
			}
		}
	}
	if len(back.Recommended.Pools) != 4 || sum < back.Recommended.Cost*(1-1e-9) || sum > back.Recommended.Cost*(1+1e-9) {
		t.Errorf("%d pools costing %.4f, the plan %.4f", len(back.Recommended.Pools), sum, back.Recommended.Cost)
	}
	var text strings.Builder
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pools.a100.slots: ", "pools.t4.slots: ", "JOBS ITS MACHINES HOLD"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, text.String())
		}
	}
}

// With flavors a plan is judged pool by pool as well: a pool whose jobs
// wait past the target makes it infeasible, however quick the others.
func TestFlavorsAreJudgedPoolByPool(t *testing.T) {
	r := sim.Result{Pools: []sim.PoolUsage{
		{Name: "a100", Kind: policy.PoolFixed, BurstWait: sim.WaitStats{N: 10, P95: 20 * time.Minute}},
		{Name: "t4", Kind: policy.PoolFixed, BurstWait: sim.WaitStats{N: 90, P95: time.Minute}},
	}}
	if v := judge(r, 10*time.Minute); v.Feasible || !strings.Contains(v.Why, "pools.a100") {
		t.Errorf("verdict %+v, want infeasible for pools.a100", v)
	}
	r.Pools = r.Pools[:1]
	if v := judge(r, 10*time.Minute); !v.Feasible {
		t.Errorf("one quota is judged by the run's waits alone: %+v", v)
	}
}

// A fleet of flavors whose A100 on-demand machines are too small for the
// 8-GPU jobs is planned, and the jobs are named, whatever strategy wins:
// the fix is not searched again flavor by flavor.
func TestFlavorsWithJobsOnlyTheQuotaHolds(t *testing.T) {
	o := twoFlavors()
	o.Pools[2].SlotsPerWorker = 4
	p, err := Make(twoModels(1), Options{Sim: o})
	if err != nil {
		t.Fatal(err)
	}
	p.Best = Point{Candidate: Candidate{Strategy: StrategyAllFixed}} // as if all fixed had won
	advice, err := p.adviseShapes(twoModels(1), Options{Sim: o}, SweepOptions{WaitTarget: 10 * time.Minute}, &runClock{now: time.Now})
	if err != nil {
		t.Fatalf("advice with flavors: %v", err)
	}
	if len(advice) != 1 || advice[0].Fix != nil || !strings.Contains(advice[0].Title, "requiring gpu_model=A100 need 8 slots") {
		t.Errorf("advice %+v", advice)
	}
}

// With flavors, a job bigger than the quota's machines for it fits no
// amount of quota: the advice asks for bigger machines, not more slots.
func TestFlavorsAdviseBiggerMachinesWhenTheQuotasAreTooSmall(t *testing.T) {
	o := twoFlavors()
	o.Pools[0].SlotsPerWorker = 4 // A100 quota machines of 4
	o.Pools[2].SlotsPerWorker = 4 // and on-demand A100 machines of 4
	p, err := Make(twoModels(1), Options{Sim: o})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, a := range p.ShapeAdvice {
		if strings.Contains(a.Title, "requiring gpu_model=A100 need 8 slots") {
			found = true
			if !strings.Contains(a.Title, "nor do the quota's machines for them (4 slots)") ||
				!strings.Contains(a.Action, "make the quota's machines for them at least 8 slots") || strings.Contains(a.Action, "keep at least") {
				t.Errorf("advice %+v", a)
			}
		}
	}
	if !found {
		t.Errorf("no advice on the 8-GPU A100 jobs: %+v", p.ShapeAdvice)
	}
}
