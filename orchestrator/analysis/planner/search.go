package planner

import (
	"math/bits"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// searchQuota finds the best quota for c's other settings by a pattern
// search on the integers: from start, try start-step and start+step, move
// to the better of the three, halve the step when neither is better, and
// stop when the step falls below one slot. On a cost curve with one
// minimum (the closed form's is convex) it lands on the best quota in
// O(log peak) simulations, two at a time; infeasible quotas rank by how far
// their waits are over, which leads the search out of them.
func (e *evaluator) searchQuota(stage string, c Candidate, start, step, peak int) (Point, error) {
	floor := e.floor(c)
	return e.searchLine(stage, start, step, floor, max(peak, floor), func(q int) Candidate {
		c.FixedSlots = q
		return c
	})
}

// searchLine is the pattern search of searchQuota over the integers
// [lo, hi], at of(q) for each q tried.
func (e *evaluator) searchLine(stage string, start, step, lo, hi int, at func(int) Candidate) (Point, error) {
	clamp := func(q int) int { return min(max(q, lo), hi) }
	step = max(step, 1)
	if e.clock != nil {
		e.clock.expect(stage, searchBound(step))
	}
	// The first move below tries start-step and start+step whatever
	// start's point turns out to be, so they are simulated with it: three
	// runs keep two cores busy where start alone would leave one idle,
	// and the memo makes the first move a lookup. They are simulated in
	// the same order as before, so the plan and its history are unchanged.
	pts, err := e.eval(at(clamp(start)), at(clamp(start-step)), at(clamp(start+step)))
	if err != nil {
		return Point{}, err
	}
	cur, q := pts[0], clamp(start)
	for moves := 0; step >= 1 && moves < 4*bits.Len(uint(hi+1))+8; moves++ {
		pts, err := e.eval(at(clamp(q-step)), at(clamp(q+step)))
		if err != nil {
			return Point{}, err
		}
		next, nq := cur, q
		for i, p := range pts {
			if better(p, next) < 0 {
				next, nq = p, clamp(q+(2*i-1)*step)
			}
		}
		if next.Candidate == cur.Candidate {
			step /= 2
			continue
		}
		cur, q = next, nq
	}
	return cur, nil
}

// refine searches the quota for c's settings, then tries the other
// watermark pairs and, for a plan with core overflow, the other overflow
// waits at the quota found, and searches again from a setting that did
// better, a few rounds at most. Quota and settings interact where work
// waits for a slot: a smaller quota wants core work to overflow sooner,
// and jobs bigger than every elastic machine want a high watermark that
// leaves them room.
func (e *evaluator) refine(stage string, c Candidate, step, peak int, waits []time.Duration, marks []Watermarks) (Point, error) {
	cur, err := e.searchQuota(stage, c, c.FixedSlots, step, peak)
	if err != nil {
		return cur, err
	}
	for range refineRounds {
		var vs []Candidate
		for _, m := range marks {
			v := cur.Candidate
			v.Watermarks = m
			vs = append(vs, e.lift(v))
		}
		if cur.CoreOverflow {
			for _, w := range waits {
				v := cur.Candidate
				v.CoreMaxWait = w
				vs = append(vs, e.lift(v))
			}
		}
		pts, err := e.eval(vs...)
		if err != nil {
			return cur, err
		}
		next := bestOf(cur, pts)
		if next.Candidate == cur.Candidate {
			break
		}
		if cur, err = e.searchQuota(stage, next.Candidate, next.FixedSlots, 1, peak); err != nil {
			return cur, err
		}
	}
	return cur, nil
}

// bestOf is the best of cur and pts by better, cur on a tie: a search
// moves only for a point that does better.
func bestOf(cur Point, pts []Point) Point {
	return slices.MinFunc(append([]Point{cur}, pts...), better)
}

// refineRounds bounds refine's rounds of settings and quota: each costs a
// few simulations, and after two the pick rarely moves.
const refineRounds = 3

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
