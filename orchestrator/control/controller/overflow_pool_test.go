package controller

import (
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// After a restart the controller counts a queued overflowed job against
// the pool rule 7 would pick for it, which orders pools as the policy
// does: price, then the smaller machine, then the name.
func TestOverflowPoolAfterRestartOrdersAsThePolicy(t *testing.T) {
	od := func(name string, price float64, slots int) policy.Pool {
		return policy.Pool{Name: name, Kind: policy.PoolOnDemand, PricePerSlotHour: price, SlotsPerWorker: slots}
	}
	cases := []struct {
		pools []policy.Pool
		want  string
	}{
		{[]policy.Pool{od("big", 2, 8), od("small", 2, 1)}, "small"},
		{[]policy.Pool{od("big", 1.9, 8), od("small", 2, 1)}, "big"},
		{[]policy.Pool{od("b", 2, 4), od("a", 2, 4)}, "a"},
		{[]policy.Pool{{Name: "fixed", Kind: policy.PoolFixed, SlotsPerWorker: 1}, {Name: "spot", Kind: policy.PoolSpot, SlotsPerWorker: 1}}, ""},
	}
	for _, c := range cases {
		h := &Hybrid{Pools: c.pools}
		if got := h.overflowPool(jobs.Job{ID: "j1"}); got != c.want {
			t.Errorf("pools %+v: got %q, want %q", c.pools, got, c.want)
		}
	}
}
