package controller

import (
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// After a restart the controller counts a queued overflowed job against
// the pool rule 7 would pick for it: among the pools whose machines hold
// the job, ordered as the policy orders them (price, then the smaller
// machine, then the name).
func TestOverflowPoolAfterRestartOrdersAsThePolicy(t *testing.T) {
	od := func(name string, price float64, slots int) policy.Pool {
		return policy.Pool{Name: name, Kind: policy.PoolOnDemand, PricePerSlotHour: price, SlotsPerWorker: slots}
	}
	t4 := od("t4", 1, 8)
	t4.Labels = map[string]string{"gpu_model": "T4"}
	a100 := od("a100", 2, 8)
	a100.Labels = map[string]string{"gpu_model": "A100"}
	cases := []struct {
		pools []policy.Pool
		job   policy.Job
		want  string
	}{
		{[]policy.Pool{od("big", 2, 8), od("small", 2, 1)}, policy.Job{}, "small"},
		{[]policy.Pool{od("big", 1.9, 8), od("small", 2, 1)}, policy.Job{}, "big"},
		{[]policy.Pool{od("b", 2, 4), od("a", 2, 4)}, policy.Job{}, "a"},
		{[]policy.Pool{{Name: "fixed", Kind: policy.PoolFixed, SlotsPerWorker: 1}, {Name: "spot", Kind: policy.PoolSpot, SlotsPerWorker: 1}}, policy.Job{}, ""},
		// A 4-slot job only fits the big machines, however cheap the small.
		{[]policy.Pool{od("big", 2.5, 8), od("small", 2, 1)}, policy.Job{Slots: 4}, "big"},
		{[]policy.Pool{od("small", 2, 1)}, policy.Job{Slots: 4}, ""},
		// Labels it requires: only the pool that declares them.
		{[]policy.Pool{t4, a100}, policy.Job{Requires: map[string]string{"gpu_model": "A100"}}, "a100"},
	}
	for _, c := range cases {
		h := &Hybrid{Pools: c.pools}
		if got := h.overflowPool(jobs.Job{ID: "j1"}, &c.job); got != c.want {
			t.Errorf("pools %+v, job %+v: got %q, want %q", c.pools, c.job, got, c.want)
		}
	}
}
