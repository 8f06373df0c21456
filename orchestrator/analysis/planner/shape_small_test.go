package planner

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// pinningTrace is two days of one-slot jobs that cannot checkpoint, in
// bursts, most of them short and one in eight ten times longer: the long
// ones outlive their neighbours and keep big machines up part empty.
func pinningTrace(seed uint64) trace.Trace {
	r := rand.New(rand.NewPCG(seed, 5))
	tr := trace.Trace{Name: "pinning"}
	for at := time.Duration(0); at < 48*time.Hour; at += time.Duration(30+r.IntN(60)) * time.Minute {
		for range 2 + r.IntN(10) {
			d := time.Duration(10+r.IntN(30)) * time.Minute
			if r.IntN(8) == 0 {
				d *= 10
			}
			tr.Jobs = append(tr.Jobs, trace.Job{Submit: at + time.Duration(r.IntN(60))*time.Second, Duration: d, Slots: 1,
				Class: jobs.ClassBurst, Template: "eval"})
		}
	}
	trace.SortJobs(tr.Jobs)
	return tr
}

// On 8-slot machines the long jobs pin free slots, and the plan suggests
// machines of one slot, simulated; with such machines already there it
// suggests nothing.
func TestPlanSuggestsSmallMachinesWhenBigOnesArePinned(t *testing.T) {
	tr := pinningTrace(1)
	o := oneSlotMachines(2.5)
	o.Pools[0].SlotsPerWorker = 8
	p, err := Make(tr, Options{Sim: o, TuneDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Gap == nil || p.Gap.ElasticPinned < pinnedShare*p.Gap.ElasticBilled {
		t.Fatalf("the trace pins too little to test with: %+v", p.Gap)
	}
	if len(p.ShapeAdvice) != 1 {
		t.Fatalf("%d pieces of shape advice, want 1: %+v", len(p.ShapeAdvice), p.ShapeAdvice)
	}
	a := p.ShapeAdvice[0]
	if a.Jobs != len(tr.Jobs) || !strings.Contains(a.Title, "billed elastic slot-hours were free slots") ||
		!strings.Contains(a.Action, "add an on-demand pool of 1-slot machines") {
		t.Errorf("advice: %+v", a)
	}
	// As many slots in all as the pool it copies: 500 machines of 8.
	if a.Fix == nil || a.Fix.SlotsPerWorker != 1 || a.Fix.Pool != "ondemand-1" || a.Fix.From != "ondemand" || a.Fix.MaxWorkers != 4000 {
		t.Fatalf("the suggested pool: %+v", a.Fix)
	}
	if want := 1 - a.Fix.Best.Cost/p.Recommended.Cost; a.Fix.Saving <= 0 || a.Fix.Saving != want {
		t.Errorf("saving %.4f, want %.4f and above 0", a.Fix.Saving, want)
	}
	t.Logf("%.0f of %.0f billed slot-hours pinned; with 1-slot machines %.2f against %.2f (%.1f%% less)",
		p.Gap.ElasticPinned, p.Gap.ElasticBilled, a.Fix.Best.Cost, p.Recommended.Cost, 100*a.Fix.Saving)

	// Jobs that require a label the pool copied carries are advised on
	// alike.
	labelled := tr
	labelled.Jobs = slices.Clone(tr.Jobs)
	for i := range labelled.Jobs {
		labelled.Jobs[i].Requires = map[string]string{"gpu_model": "A100"}
	}
	lo := o
	lo.Pools = slices.Clone(o.Pools)
	lo.Pools[0].Labels = map[string]string{"gpu_model": "A100"}
	if p, err := Make(labelled, Options{Sim: lo, TuneDays: -1}); err != nil || len(p.ShapeAdvice) != 1 || p.ShapeAdvice[0].Fix == nil {
		t.Errorf("labelled jobs: %v, advice %+v", err, p.ShapeAdvice)
	}

	o.Pools[0].SlotsPerWorker = 1
	p, err = Make(tr, Options{Sim: o, TuneDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ShapeAdvice) != 0 {
		t.Errorf("one-slot machines, yet advice: %+v", p.ShapeAdvice)
	}
}
