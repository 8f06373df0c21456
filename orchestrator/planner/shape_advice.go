package planner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/orchestrator/trace"
)

// ShapeAdvice names jobs that the fleet's machines cannot hold, says what
// to change, and, for a missing machine size, what the change would save.
type ShapeAdvice struct {
	// Title is what is wrong, with the figures; Action what to change.
	Title  string `json:"title"`
	Action string `json:"action"`
	// Jobs and SlotHours are the jobs concerned and what they hold.
	Jobs      int     `json:"jobs"`
	SlotHours float64 `json:"slot_hours"`
	// Fix is the suggested pool simulated on the whole history, when the
	// advice suggests one.
	Fix *ShapeFix `json:"fix,omitempty"`
}

// ShapeFix is a plan searched again with one more elastic pool: a copy of
// the cheapest on-demand pool (spot without one) whose machines hold the
// biggest job that only the quota could run.
type ShapeFix struct {
	Pool           string  `json:"pool"`
	From           string  `json:"from"`
	SlotsPerWorker int     `json:"slots_per_worker"`
	MaxWorkers     int     `json:"max_workers"`
	Best           Summary `json:"best"`
	// Saving is what the fix saves against the plan without it, as a
	// share of that plan's cost (negative when it costs more).
	Saving float64 `json:"saving"`
}

// adviseShapes says which jobs only the quota, or no pool, can hold, and
// simulates an elastic pool of machines big enough for them.
func (p *Plan) adviseShapes(tr trace.Trace, o Options, sw SweepOptions, clock *runClock) ([]ShapeAdvice, error) {
	var out []ShapeAdvice
	// Jobs too big for every elastic machine, as if core work could
	// overflow: those that only need overflow switched on are not a
	// question of machine sizes.
	big := p.Shapes.QuotaOnly(true)
	if len(big) > 0 {
		a := ShapeAdvice{}
		need, smallest := 0, 0
		for _, s := range big {
			a.Jobs += s.Jobs
			a.SlotHours += s.SlotHours
			need = max(need, s.Slots)
			if smallest == 0 || s.Slots < smallest {
				smallest = s.Slots
			}
		}
		largest := max(p.Shapes.LargestOnDemand, p.Shapes.LargestSpot)
		sizes := fmt.Sprintf("%d", need)
		if smallest < need {
			sizes = fmt.Sprintf("%d to %d", smallest, need)
		}
		a.Title = fmt.Sprintf("%d jobs need %s slots on one machine (%.0f slot-hours); no elastic pool offers more than %d",
			a.Jobs, sizes, a.SlotHours, largest)
		floor := p.Shapes.Floor(true, 0)
		a.Action = fmt.Sprintf("add an on-demand pool of %d-slot machines, or keep at least %d fixed", need, floor)
		if gang := biggestGang(big); gang != "" {
			a.Title += "; the largest is " + gang
		}
		fix, err := p.simulateFix(tr, o, sw, clock, need, big)
		if err != nil {
			return nil, err
		}
		if fix != nil {
			a.Fix = fix
			a.Action += fmt.Sprintf(". Simulated with pools.%s (%d slots per worker, as %s otherwise): %s at %.2f, %s",
				fix.Pool, fix.SlotsPerWorker, fix.From, fix.Best.describe(), fix.Best.Cost, savingWords(fix.Saving))
			if !fix.Best.Feasible {
				a.Action += " (" + fix.Best.Why + ")"
			}
		}
		out = append(out, a)
	}
	for _, s := range p.Shapes.Unlabelled() {
		out = append(out, ShapeAdvice{
			Title: fmt.Sprintf("%d jobs require %s; no pool carries it, so live they wait for ever (the simulation does not place by label)",
				s.Jobs, labelWords(s.Requires)),
			Action: fmt.Sprintf("add %s to the labels of a pool whose machines have it, or drop the requirement", labelWords(s.Requires)),
			Jobs:   s.Jobs, SlotHours: s.SlotHours,
		})
	}
	return out, nil
}

// simulateFix searches the plan again with an elastic pool of size-slot
// machines added, from the best plan's settings, with and without core
// overflow. It returns nil when there is no elastic pool to copy.
func (p *Plan) simulateFix(tr trace.Trace, o Options, sw SweepOptions, clock *runClock, size int, big []Shape) (*ShapeFix, error) {
	pool, ok := SuggestedPool(o.Sim.Pools, size, big)
	if !ok {
		return nil, nil
	}
	so := o.Sim
	so.Pools = append(slices.Clone(o.Sim.Pools), pool.Pool)
	shapes := ShapesOf(tr, so.Pools)
	ev := newEvaluator(tr, tr, so, sw.WaitTarget, sw.Parallel, clock)
	ev.shapes = shapes
	opt := OfflineOptimumAbove(DemandLevels(tr), p.Prices, shapes.Floor(!o.WithoutCoreOverflow, 0), ElasticMachine(so.Pools, p.Prices))
	settings := []Candidate{p.Best.Candidate}
	if p.Best.Strategy != StrategyHybrid {
		settings[0] = Candidate{Strategy: StrategyHybrid, Watermarks: designWatermarks()}
	}
	if !o.WithoutCoreOverflow && !settings[0].CoreOverflow {
		c := settings[0]
		c.CoreOverflow, c.CoreMaxWait = true, overflowWaits(sw.WaitTarget, o.Sim)[0]
		settings = append(settings, c)
	}
	for _, c := range settings {
		c.FixedSlots = opt.FixedSlots
		if _, err := ev.searchQuota("quota search with pools."+pool.Name, ev.lift(c), opt.FixedSlots, max(1, p.Peak/16), p.Peak); err != nil {
			return nil, err
		}
	}
	best, _ := ev.best(nil)
	fix := &ShapeFix{Pool: pool.Name, From: pool.From, SlotsPerWorker: size, MaxWorkers: pool.MaxWorkers, Best: p.summarize(best)}
	if p.Recommended.Cost > 0 {
		fix.Saving = 1 - best.Result.Cost.Total/p.Recommended.Cost
	}
	return fix, nil
}

// Suggestion is an elastic pool to add, and the pool it copies.
type Suggestion struct {
	policy.Pool
	From string
}

// SuggestedPool is a pool whose machines hold the biggest of shapes: a
// copy of the cheapest on-demand pool (which core work may overflow to,
// else the cheapest spot pool) with size slots per machine, a free name,
// and enough machines for the biggest gang. False when there is no
// elastic pool to copy.
func SuggestedPool(pools []policy.Pool, size int, shapes []Shape) (Suggestion, bool) {
	base, ok := fixTemplate(pools)
	if !ok {
		return Suggestion{}, false
	}
	pool := base
	pool.Name = freePoolName(pools, fmt.Sprintf("%s-%d", base.Name, size))
	pool.SlotsPerWorker = size
	if pool.MaxWorkers > 0 {
		for _, s := range shapes {
			if s.Slots <= size {
				pool.MaxWorkers = max(pool.MaxWorkers, (s.Members+size/s.Slots-1)/(size/s.Slots))
			}
		}
	}
	return Suggestion{Pool: pool, From: base.Name}, true
}

// fixTemplate is the pool a suggested pool copies: the cheapest on-demand
// pool, which core work may overflow to, else the cheapest spot pool.
func fixTemplate(pools []policy.Pool) (policy.Pool, bool) {
	var best policy.Pool
	found := false
	for _, kind := range []policy.PoolKind{policy.PoolOnDemand, policy.PoolSpot} {
		for _, p := range pools {
			if p.Kind == kind && (!found || p.PricePerSlotHour < best.PricePerSlotHour) {
				best, found = p, true
			}
		}
		if found {
			return best, true
		}
	}
	return best, false
}

func freePoolName(pools []policy.Pool, name string) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(pools, func(p policy.Pool) bool { return p.Name == n })
	}
	out := name
	for i := 2; taken(out); i++ {
		out = fmt.Sprintf("%s-%d", name, i)
	}
	return out
}

// biggestGang names the biggest gang among shapes, or "" when none is one.
func biggestGang(shapes []Shape) string {
	for _, s := range shapes { // biggest first
		if s.Members > 1 {
			return fmt.Sprintf("a gang of %d x %d slots", s.Members, s.Slots)
		}
	}
	return ""
}

func labelWords(l map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, ", ")
}

func savingWords(share float64) string {
	if share >= 0 {
		return fmt.Sprintf("%.1f%% below the plan without it", 100*share)
	}
	return fmt.Sprintf("%.1f%% above the plan without it", -100*share)
}
