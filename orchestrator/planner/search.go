package planner

import (
	"math/bits"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/orchestrator/sim"
)

// searchQuota finds the best quota for c's other settings by a pattern
// search on the integers: from start, try start-step and start+step, move
// to the better of the three, halve the step when neither is better, and
// stop when the step falls below one slot. On a cost curve with one
// minimum (the closed form's is convex) it lands on the best quota in
// O(log peak) simulations, two at a time; infeasible quotas rank by how far
// their waits are over, which leads the search out of them.
func (e *evaluator) searchQuota(stage string, c Candidate, start, step, peak int) (Point, error) {
	clamp := func(q int) int { return min(max(q, 0), peak) }
	c.FixedSlots = clamp(start)
	step = max(step, 1)
	if e.clock != nil {
		e.clock.expect(stage, searchBound(step))
	}
	pts, err := e.eval(c)
	if err != nil {
		return Point{}, err
	}
	cur := pts[0]
	for moves := 0; step >= 1 && moves < 4*bits.Len(uint(peak+1))+8; moves++ {
		lo, hi := cur.Candidate, cur.Candidate
		lo.FixedSlots, hi.FixedSlots = clamp(cur.FixedSlots-step), clamp(cur.FixedSlots+step)
		pts, err := e.eval(lo, hi)
		if err != nil {
			return Point{}, err
		}
		next := cur
		for _, p := range pts {
			if better(p, next) < 0 {
				next = p
			}
		}
		if next.Candidate == cur.Candidate {
			step /= 2
			continue
		}
		cur = next
	}
	return cur, nil
}

// searchBound is about the most simulations a quota search from step
// runs: two per halving, and a few moves.
func searchBound(step int) int { return 2 * (bits.Len(uint(max(step, 1))) + 2) }

// overflowWaits are the core max waits the search tries: the longest a
// core job may wait for a fixed slot and still start within target on an
// on-demand worker (target less the slowest on-demand start-up and two
// ticks: one to see the wait, one to place the job), and half of it. A
// longer wait leaves more time for a fixed slot to free up, so fewer
// premium hours; a shorter one keeps core p95 further from the target.
// Zero is tried too: overflow at once, as all-elastic does past the quota.
func overflowWaits(target time.Duration, base sim.Options) []time.Duration {
	tick := base.Tick
	if tick <= 0 {
		tick = sim.DefaultTick
	}
	var boot time.Duration
	for _, p := range base.Pools {
		if p.Kind == policy.PoolOnDemand {
			boot = max(boot, p.StartupDelay)
		}
	}
	slack := (target - boot - 2*tick).Truncate(time.Second)
	if slack <= 0 {
		return []time.Duration{0}
	}
	return []time.Duration{slack, (slack / 2).Truncate(time.Second), 0}
}

// topDistinct returns up to n feasible points of pts, best first.
func topDistinct(pts []Point, n int) []Point {
	var ok []Point
	for _, p := range pts {
		if p.Feasible {
			ok = append(ok, p)
		}
	}
	slices.SortStableFunc(ok, better)
	return ok[:min(n, len(ok))]
}
