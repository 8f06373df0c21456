package planner

import (
	"strings"
	"testing"
	"time"
)

// The target holds over all jobs: a pool whose own p95 is past it is
// named in the verdict, one within it is not.
func TestVerdictNamesPoolsPastTheTarget(t *testing.T) {
	p := &Plan{WaitTarget: 10 * time.Minute, Recommended: Summary{Feasible: true, Pools: []PoolSummary{
		{Pool: "ondemand", CoreWaitP95S: 589, BurstWaitP95S: 11},
		{Pool: "fixed", CoreWaitP95S: 2127602, BurstWaitP95S: 5},
	}}}
	v := p.VerdictLine()
	if !strings.Contains(v, "but past the target on fixed (p95 core 591h0m2s): the target holds over all jobs") || strings.Contains(v, "on ondemand") {
		t.Errorf("verdict: %s", v)
	}
	p.Recommended.Pools[1].CoreWaitP95S = 600
	if v := p.VerdictLine(); strings.Contains(v, "past the target") {
		t.Errorf("every pool within the target, yet: %s", v)
	}
}
