package planner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
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

// adviseShapes says which jobs only the quota, or no pool, can hold, by
// the labels they require: for want of an elastic pool carrying their
// labels, or of machines big enough among those that do. Core jobs count
// as if they could overflow: those that need only rule 7 switched on are
// not a question of machines. The missing machine size is simulated.
func (p *Plan) adviseShapes(tr trace.Trace, o Options, sw SweepOptions, clock *runClock) ([]ShapeAdvice, error) {
	var out []ShapeAdvice
	for _, group := range p.Shapes.QuotaOnlyByLabels() {
		a, err := p.adviseGroup(tr, o, sw, clock, group)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	for _, s := range p.Shapes.Unlabelled() {
		out = append(out, ShapeAdvice{
			Title:  fmt.Sprintf("%d jobs require %s; no pool carries it, so they wait for ever", s.Jobs, LabelWords(s.Requires)),
			Action: fmt.Sprintf("add %s to the labels of a pool whose machines have it, or drop the requirement", LabelWords(s.Requires)),
			Jobs:   s.Jobs, SlotHours: s.SlotHours,
		})
	}
	return out, nil
}

// adviseGroup advises on jobs of one label set that only the quota can
// hold.
func (p *Plan) adviseGroup(tr trace.Trace, o Options, sw SweepOptions, clock *runClock, group []Shape) (ShapeAdvice, error) {
	var a ShapeAdvice
	need, smallest, floor := 0, 0, 0
	for _, s := range group {
		a.Jobs += s.Jobs
		a.SlotHours += s.SlotHours
		need = max(need, s.Slots)
		if smallest == 0 || s.Slots < smallest {
			smallest = s.Slots
		}
		floor = max(floor, s.TotalSlots())
	}
	req := group[0].Requires
	who, pools := "", "pools"
	if len(req) > 0 {
		who, pools = " requiring "+LabelWords(req), "pools that carry "+LabelWords(req)
	}
	if !group[0].ElasticLabels {
		a.Title = fmt.Sprintf("%d jobs%s (%.0f slot-hours) have no elastic pool that carries their labels: only the quota runs them",
			a.Jobs, who, a.SlotHours)
		a.Action = fmt.Sprintf("add an on-demand pool whose machines carry %s to run their peaks elastic, or keep at least %d fixed on %s",
			LabelWords(req), floor, pools)
		return a, nil
	}
	largest := 0
	for _, pl := range p.pools {
		if pl.Kind.Elastic() && jobs.Carries(pl.Labels, req) {
			largest = max(largest, machineOf(pl))
		}
	}
	sizes := fmt.Sprintf("%d", need)
	if smallest < need {
		sizes = fmt.Sprintf("%d to %d", smallest, need)
	}
	a.Title = fmt.Sprintf("%d jobs%s need %s slots on one machine (%.0f slot-hours); no elastic pool for them offers more than %d",
		a.Jobs, who, sizes, a.SlotHours, largest)
	if gang := biggestGang(group); gang != "" {
		a.Title += "; the largest is " + gang
	}
	a.Action = fmt.Sprintf("add an on-demand pool of %d-slot machines, or keep at least %d fixed", need, floor)
	if len(req) > 0 {
		a.Action = fmt.Sprintf("add an on-demand pool of %d-slot machines that carry %s, or keep at least %d fixed on %s",
			need, LabelWords(req), floor, pools)
	}
	if m := p.fixedMachine(req); m > 0 && need > m {
		// A quota per flavor is cut into its pool's machines: more of it
		// would not hold these jobs either.
		a.Title += fmt.Sprintf(", nor do the quota's machines for them (%d slots)", m)
		a.Action = fmt.Sprintf("add an on-demand pool of %d-slot machines", need)
		if len(req) > 0 {
			a.Action += " that carry " + LabelWords(req)
		}
		a.Action += fmt.Sprintf(", or make the quota's machines for them at least %d slots", need)
	}
	fix, err := p.simulateFix(tr, o, sw, clock, need, group)
	if err != nil || fix == nil {
		return a, err
	}
	a.Fix = fix
	a.Action += ". " + fix.words()
	return a, nil
}

// words says what the fix was simulated with and what it came to.
func (f *ShapeFix) words() string {
	unit := "slots"
	if f.SlotsPerWorker == 1 {
		unit = "slot"
	}
	w := fmt.Sprintf("Simulated with pools.%s (%d %s per worker, as %s otherwise): %s at %.2f, %s",
		f.Pool, f.SlotsPerWorker, unit, f.From, f.Best.describe(), f.Best.Cost, savingWords(f.Saving))
	if !f.Best.Feasible {
		w += " (" + f.Best.Why + ")"
	}
	return w
}

// fixedMachine is the biggest machine, in slots, of the fixed pools that
// carry req in a fleet of flavors, whose quotas are cut into their pools'
// machines; 0 with one quota (one worker of any size) or a pool without a
// machine size.
func (p *Plan) fixedMachine(req map[string]string) int {
	if len(p.flavorNames()) == 0 {
		return 0
	}
	m := 0
	for _, pl := range p.pools {
		if pl.Kind == policy.PoolFixed && jobs.Carries(pl.Labels, req) {
			if pl.SlotsPerWorker <= 0 {
				return 0
			}
			m = max(m, pl.SlotsPerWorker)
		}
	}
	return m
}

// simulateFix searches the plan again with an elastic pool of size-slot
// machines added, from the best plan's settings, with and without core
// overflow. It returns nil when there is no elastic pool to copy.
func (p *Plan) simulateFix(tr trace.Trace, o Options, sw SweepOptions, clock *runClock, size int, big []Shape) (*ShapeFix, error) {
	pool, ok := SuggestedPool(o.Sim.Pools, size, big)
	if !ok || len(p.flavorNames()) > 0 {
		// With a quota per flavor the fix would be searched flavor by
		// flavor again; the advice stands without a price.
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

// SuggestedPool is a pool whose machines hold the biggest of shapes, all
// of one label set: a copy of the cheapest on-demand pool that carries
// their labels (which core work may overflow to, else the cheapest such
// spot pool) with size slots per machine, a free name, enough machines
// for the biggest gang, and, when its machines are smaller, as many
// slots in all as the pool it copies. False when there is no elastic pool
// to copy.
func SuggestedPool(pools []policy.Pool, size int, shapes []Shape) (Suggestion, bool) {
	var req map[string]string
	if len(shapes) > 0 {
		req = shapes[0].Requires
	}
	base, ok := fixTemplate(slices.DeleteFunc(slices.Clone(pools), func(p policy.Pool) bool { return !jobs.Carries(p.Labels, req) }))
	if !ok {
		return Suggestion{}, false
	}
	pool := base
	pool.Name = freePoolName(pools, fmt.Sprintf("%s-%d", base.Name, size))
	pool.SlotsPerWorker = size
	if m := machineOf(base); pool.MaxWorkers > 0 && size < m {
		// Smaller machines: as many slots in all as the pool copied.
		pool.MaxWorkers = (base.MaxWorkers*m + size - 1) / size
	}
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

// LabelWords writes labels as "k=v, k2=v2", keys sorted.
func LabelWords(l map[string]string) string {
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
