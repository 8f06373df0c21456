package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Jobs bigger than every elastic machine are named with what to change,
// and the pool suggested is simulated: machines that hold them let the
// quota drop below the floor they set.
func TestPlanAdvisesAPoolForJobsOnlyTheQuotaHolds(t *testing.T) {
	tr := bigJobsTrace(2)
	p, err := Make(tr, Options{Sim: oneSlotMachines(1 / 0.7), TuneDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	big := 0
	for _, j := range tr.Jobs {
		if j.Slots > 1 {
			big++
		}
	}
	if len(p.ShapeAdvice) != 1 {
		t.Fatalf("%d pieces of shape advice, want 1: %+v", len(p.ShapeAdvice), p.ShapeAdvice)
	}
	a := p.ShapeAdvice[0]
	if a.Jobs != big || !strings.Contains(a.Title, "need 4 slots on one machine") || !strings.Contains(a.Title, "no elastic pool for them offers more than 1") ||
		!strings.Contains(a.Action, "add an on-demand pool of 4-slot machines, or keep at least 4 fixed") {
		t.Errorf("advice on %d big jobs: %+v", big, a)
	}
	if a.Fix == nil || a.Fix.SlotsPerWorker != 4 || a.Fix.Pool != "ondemand-4" || a.Fix.From != "ondemand" {
		t.Fatalf("the suggested pool: %+v", a.Fix)
	}
	// The fix is searched like the plan: feasible, and its quota free of
	// the floor the big jobs set.
	if !a.Fix.Best.Feasible || a.Fix.Best.Cost <= 0 {
		t.Errorf("the fix's plan: %+v", a.Fix.Best)
	}
	if want := 1 - a.Fix.Best.Cost/p.Recommended.Cost; a.Fix.Saving != want {
		t.Errorf("saving %.4f, want %.4f", a.Fix.Saving, want)
	}
	if !strings.Contains(a.Action, "Simulated with pools.ondemand-4") {
		t.Errorf("the action does not say what was simulated: %s", a.Action)
	}
	var text strings.Builder
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shapes: jobs no elastic machine can hold need 4 slots on the quota", "shapes: " + a.Title} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// A job requiring a label no pool carries is named: live it waits for
// ever.
func TestPlanNamesLabelsNoPoolCarries(t *testing.T) {
	tr := trace.Trace{}
	for h := range 12 {
		tr.Jobs = append(tr.Jobs, trace.Job{Submit: time.Duration(h) * time.Hour, Duration: time.Hour, Slots: 1, Class: jobs.ClassBurst})
	}
	tr.Jobs[3].Requires = map[string]string{"gpu_model": "H100"}
	o := oneSlotMachines(1.5)
	o.Pools[0].Labels = map[string]string{"gpu_model": "A100"} // the fleet tells models apart
	p, err := Make(tr, Options{Sim: o, TuneDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ShapeAdvice) != 1 {
		t.Fatalf("%d pieces of shape advice, want 1: %+v", len(p.ShapeAdvice), p.ShapeAdvice)
	}
	if l := p.ShapeAdvice[0]; l.Jobs != 1 || !strings.Contains(l.Title, "gpu_model=H100") || l.Fix != nil {
		t.Errorf("advice on the unlabelled job: %+v", l)
	}
}

// A trace whose jobs all fit the elastic machines gets no advice and no
// floor.
func TestNoShapeAdviceWhenEveryJobFits(t *testing.T) {
	tr := trace.Trace{}
	for h := range 12 {
		tr.Jobs = append(tr.Jobs, trace.Job{Submit: time.Duration(h) * time.Hour, Duration: time.Hour, Slots: 1, Class: jobs.ClassBurst})
	}
	p, err := Make(tr, Options{Sim: oneSlotMachines(1.5), TuneDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ShapeAdvice) != 0 || p.Optimum.Floor != 0 || p.Optimum.WithoutShapes != nil {
		t.Errorf("advice %+v, floor %d", p.ShapeAdvice, p.Optimum.Floor)
	}
}
