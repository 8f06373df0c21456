package planner

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// A trace naming GPU models, planned on a fleet that does not tell models
// apart, is planned as if every GPU were alike, and says so; a key some
// pool declares is kept.
func TestLabelsNoPoolDeclaresAreRelaxed(t *testing.T) {
	a10 := map[string]string{"gpu_model": "A10", "zone": "a"}
	tr := trace.Trace{Jobs: []trace.Job{
		{Duration: time.Hour, Slots: 1, Class: jobs.ClassBurst, Requires: a10},
		{Submit: time.Minute, Duration: time.Hour, Slots: 1, Class: jobs.ClassBurst, Requires: a10},
		{Submit: 2 * time.Minute, Duration: time.Hour, Slots: 1, Class: jobs.ClassBurst},
	}}
	pools := []policy.Pool{{Name: "od", Kind: policy.PoolOnDemand, SlotsPerWorker: 1, Labels: map[string]string{"zone": "a"}}}
	got, dropped := RelaxUnknownLabels(tr, pools)
	if len(dropped) != 1 || dropped[0] != "gpu_model" {
		t.Fatalf("dropped %v, want [gpu_model]", dropped)
	}
	for i, j := range got.Jobs[:2] {
		if len(j.Requires) != 1 || j.Requires["zone"] != "a" {
			t.Errorf("job %d requires %v, want zone=a alone", i, j.Requires)
		}
	}
	if got.Jobs[2].Requires != nil || tr.Jobs[0].Requires["gpu_model"] != "A10" {
		t.Errorf("the unlabelled job got %v, or the input changed: %v", got.Jobs[2].Requires, tr.Jobs[0].Requires)
	}
	if same, none := RelaxUnknownLabels(tr, append(pools, policy.Pool{Name: "f", Kind: policy.PoolFixed,
		Labels: map[string]string{"gpu_model": "T4"}})); none != nil || same.Jobs[0].Requires["gpu_model"] != "A10" {
		t.Errorf("a declared key was dropped: %v", none)
	}
	p, err := Make(tr, Options{Sim: oneSlotMachines(1.5), TuneDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Relaxed) != 2 || !p.Recommended.Feasible {
		t.Errorf("relaxed %v, feasible %t: %s", p.Relaxed, p.Recommended.Feasible, p.VerdictLine())
	}
}
