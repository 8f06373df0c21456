package planner

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Flavors are a fleet's fixed pools when it buys quota per flavor (pools
// whose labels differ, such as gpu_model: A100 and gpu_model: T4), in name
// order: the coordinates of the plan's quota. One fixed pool or none is no
// flavor at all, and the plan sizes one quota.
func Flavors(pools []policy.Pool) []policy.Pool {
	var out []policy.Pool
	for _, p := range pools {
		if p.Kind == policy.PoolFixed {
			out = append(out, p)
		}
	}
	if len(out) < 2 {
		return nil
	}
	slices.SortFunc(out, func(a, b policy.Pool) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// flavorDemand splits tr by the flavor each job would run on: the
// cheapest fixed pool whose labels meet its requirements (by name on a
// tie). Jobs no flavor can run are left out; they run elastic or nowhere.
func flavorDemand(tr trace.Trace, flavors []policy.Pool) []trace.Trace {
	order := slices.Clone(flavors)
	slices.SortStableFunc(order, func(a, b policy.Pool) int { return cmp.Compare(a.PricePerSlotHour, b.PricePerSlotHour) })
	out := make([]trace.Trace, len(flavors))
	for i := range out {
		out[i] = trace.Trace{Name: flavors[i].Name, Start: tr.Start}
	}
	for _, j := range tr.Jobs {
		for _, f := range order {
			if jobs.Carries(f.Labels, j.Requires) {
				i := slices.IndexFunc(flavors, func(p policy.Pool) bool { return p.Name == f.Name })
				out[i].Jobs = append(out[i].Jobs, j)
				break
			}
		}
	}
	return out
}

// flavorPrices are the closed forms' prices for flavor f: its own fixed
// price, and the cheapest elastic pool whose machines carry its labels
// (on-demand first, as PricesOf), else base's.
func flavorPrices(f policy.Pool, pools []policy.Pool, base Prices) Prices {
	pr, err := PricesOf(elasticFor(f, pools), base.FixedPerSlotHour)
	if err != nil {
		pr = base
	}
	if f.PricePerSlotHour > 0 {
		pr.FixedPerSlotHour = f.PricePerSlotHour
	}
	return pr
}

// flavor is one fixed pool of a fleet of flavors with what the plan
// reads of it, worked out once: the jobs that would run on it and their
// demand, its closed-form prices, and the machines its peaks rent.
type flavor struct {
	pool    policy.Pool
	demand  trace.Trace
	levels  Levels
	prices  Prices
	machine int
	elastic bool // some elastic pool carries its labels
}

// flavorsOf works out each flavor of pools for tr.
func flavorsOf(tr trace.Trace, pools []policy.Pool, base Prices) []flavor {
	fixed := Flavors(pools)
	out := make([]flavor, len(fixed))
	for i, part := range flavorDemand(tr, fixed) {
		f := flavor{pool: fixed[i], demand: part, levels: DemandLevels(part), prices: flavorPrices(fixed[i], pools, base)}
		el := elasticFor(fixed[i], pools)
		f.machine, f.elastic = ElasticMachine(el, f.prices), len(el) > 0
		out[i] = f
	}
	return out
}

// optimum is the flavor's offline optimum for its own jobs, at least at
// the floor its jobs too big for every elastic machine set.
func (f flavor) optimum(pools []policy.Pool) Optimum {
	// Jobs bigger than the flavor's machines run on none of its quota,
	// however large: they set no floor (the advice names them).
	floor := 0
	for _, sh := range ShapesOf(f.demand, pools).QuotaOnly(true) {
		if m := f.pool.SlotsPerWorker; m <= 0 || sh.Slots <= m {
			floor = max(floor, sh.TotalSlots())
		}
	}
	if !f.elastic {
		// No elastic pool carries the flavor: its quota is all its jobs
		// have, so it starts at their peak.
		floor = max(floor, f.levels.Peak())
	}
	return OfflineOptimumAbove(f.levels, f.prices, floor, f.machine)
}

// flavorOptima are each flavor's offline optimum and their sum, the
// fleet's optimum.
func flavorOptima(fs []flavor, pools []policy.Pool) (Optimum, []Optimum) {
	var total, free Optimum
	each := make([]Optimum, len(fs))
	moved := false
	for i, f := range fs {
		o := f.optimum(pools)
		each[i] = o
		total.FixedSlots += o.FixedSlots
		total.Fixed += o.Fixed
		total.Elastic += o.Elastic
		total.Cost += o.Cost
		total.Floor += o.Floor
		total.Machine = max(total.Machine, o.Machine)
		w := o
		if o.WithoutShapes != nil {
			w, moved = *o.WithoutShapes, true
		}
		free.FixedSlots += w.FixedSlots
		free.Fixed += w.Fixed
		free.Elastic += w.Elastic
		free.Cost += w.Cost
	}
	if moved {
		total.WithoutShapes = &free
	}
	return total, each
}

// searchFlavors is the search for a fleet of flavors, on the whole
// history: every flavor at its own optimum first, with the overflow waits
// and watermarks tried there; then rounds of a quota search along each
// flavor's quota in turn, the others held, each round ending with the
// watermarks and waits tried again at the quotas found, until a round
// changes nothing. With and without core overflow, as for one quota. At
// the end each flavor's quota is the best for the others' within a slot,
// which a brute force over one pool checks.
func (p *Plan) searchFlavors(whole *evaluator, o Options, sw SweepOptions, fs []flavor) error {
	start := make(Quotas, len(fs))
	floors := make([]int, len(fs))
	peaks := make([]int, len(fs))
	for i, f := range p.FlavorOptima {
		start[i] = PoolQuota{Pool: fs[i].pool.Name, Slots: f.FixedSlots}
		floors[i] = f.Floor
		peaks[i] = max(fs[i].levels.Peak(), floors[i])
	}
	p.FlavorStart = start
	waits := overflowWaits(sw.WaitTarget, o.Sim)
	at := Candidate{Strategy: StrategyHybrid, Watermarks: designWatermarks()}.withSplit(start)
	cands := []Candidate{
		{Strategy: StrategyAllFixed},
		{Strategy: StrategyAllElastic},
		at,
	}
	if !o.WithoutCoreOverflow {
		for _, w := range waits {
			c := at
			c.CoreOverflow, c.CoreMaxWait = true, w
			cands = append(cands, c)
		}
	}
	whole.clock.expect("flavors at their optima", len(cands))
	pts, err := whole.eval(cands...)
	if err != nil {
		return err
	}
	p.AllFixed, p.AllElastic = pts[0].Result, pts[1].Result
	for _, ov := range []bool{true, false} {
		if ov && o.WithoutCoreOverflow {
			continue
		}
		st, ok := whole.best(func(pt Point) bool { return pt.Strategy == StrategyHybrid && pt.CoreOverflow == ov })
		if !ok {
			c := at
			st = Point{Candidate: c}
		}
		pt, err := whole.descend(st.Candidate, floors, peaks, waits, sw.Watermarks)
		if err != nil {
			return err
		}
		if _, err := whole.polish(pt, floors, peaks); err != nil {
			return err
		}
	}
	// The best may be a point the search passed on its way (another
	// wait, say): polish it too.
	best, _ := whole.best(nil)
	if best.Strategy == StrategyHybrid {
		if best, err = whole.polish(best, floors, peaks); err != nil {
			return err
		}
	}
	p.Best = best
	p.Recommended = p.summarize(best)
	if ru, ok := whole.best(func(pt Point) bool { return pt.Feasible && otherShape(pt, best) }); ok {
		s := p.summarize(ru)
		p.RunnerUp = &s
	}
	startPt, _ := whole.eval(at)
	p.Recommendations = []Recommendation{
		{Method: "offline optimum", FixedSlots: at.FixedSlots, ClosedForm: closedForm(fs, start) + p.Optimum.ElasticOnly,
			Why:        fmt.Sprintf("each flavor at the cheapest quota for its own jobs if elastic capacity came the instant it was needed (%s)", start),
			Watermarks: at.Watermarks, Simulated: startPt[0].Result, Verdict: startPt[0].Verdict},
		{Method: "simulated", FixedSlots: best.FixedSlots, ClosedForm: closedForm(fs, quotasOf(best.Split)) + p.Optimum.ElasticOnly,
			Why: simulatedWhy(best, sw.WaitTarget), Watermarks: best.Watermarks,
			CoreOverflow: best.CoreOverflow, CoreMaxWait: best.CoreMaxWait, Simulated: best.Result, Verdict: best.Verdict},
	}
	return nil
}

// descend runs rounds of quota searches along each flavor's quota, the
// others held, then tries every watermark pair and overflow wait at the
// quotas found, until a round moves nothing (a few rounds at most).
func (e *evaluator) descend(c Candidate, floors, peaks []int, waits []time.Duration, marks []Watermarks) (Point, error) {
	var cur Point
	for round := range refineRounds + 1 {
		before := c
		for i := range floors {
			q := quotasOf(c.Split)
			pt, err := e.searchLine(fmt.Sprintf("quota search on %s", q[i].Pool), q[i].Slots, max(1, peaks[i]/8>>round), floors[i], peaks[i],
				func(n int) Candidate { return c.withSplit(q.With(i, n)) })
			if err != nil {
				return pt, err
			}
			cur, c = pt, pt.Candidate
		}
		var vs []Candidate
		for _, m := range marks {
			v := c
			v.Watermarks = m
			vs = append(vs, v)
		}
		if c.CoreOverflow {
			for _, w := range waits {
				v := c
				v.CoreMaxWait = w
				vs = append(vs, v)
			}
		}
		pts, err := e.eval(vs...)
		if err != nil {
			return cur, err
		}
		cur = bestOf(cur, pts)
		c = cur.Candidate
		if c == before {
			break
		}
	}
	return cur, nil
}

// flavorBase is base with every flavor named in FixedSlotsByPool, as the
// simulator asks of a fleet of several fixed pools: a candidate's split
// replaces the numbers, and all fixed sizes each flavor to its own peak.
func flavorBase(base sim.Options, flavors []policy.Pool) sim.Options {
	base.FixedSlots, base.FixedSlotsByPool = 0, map[string]int{}
	for _, f := range flavors {
		base.FixedSlotsByPool[f.Name] = 0
	}
	return base
}

// closedForm prices a split as the offline optimum does, flavor by
// flavor at its own prices and machines. The jobs no flavor carries cost
// the same at every split (Optimum.ElasticOnly); callers add them.
func closedForm(fs []flavor, q Quotas) float64 {
	total := 0.0
	for i, f := range fs[:min(len(fs), len(q))] {
		fixed, elastic := f.levels.CostIn(q[i].Slots, f.prices, f.machine)
		total += fixed + elastic
	}
	return total
}

// elasticFor are the elastic pools whose machines carry flavor f's labels:
// where its jobs' peaks can go.
func elasticFor(f policy.Pool, pools []policy.Pool) []policy.Pool {
	var out []policy.Pool
	for _, p := range pools {
		if p.Kind.Elastic() && jobs.Carries(p.Labels, f.Labels) {
			out = append(out, p)
		}
	}
	return out
}

// polish tries every quota within a few slots of each flavor's, the
// others held, and moves to the best, until a round moves nothing (three
// rounds at most): a flavor's cost is bumpy in its quota where its jobs
// come in several sizes, and a pattern search can stop at a bump.
func (e *evaluator) polish(cur Point, floors, peaks []int) (Point, error) {
	for range 3 {
		moved := false
		for i := range floors {
			q := quotasOf(cur.Split)
			w := max(2, peaks[i]/16)
			var cs []Candidate
			for n := max(floors[i], q[i].Slots-w); n <= min(peaks[i], q[i].Slots+w); n++ {
				cs = append(cs, cur.Candidate.withSplit(q.With(i, n)))
			}
			if e.clock != nil {
				e.clock.expect("quota polish on "+q[i].Pool, len(cs))
			}
			pts, err := e.eval(cs...)
			if err != nil {
				return cur, err
			}
			next := bestOf(cur, pts)
			moved = moved || next.Candidate != cur.Candidate
			cur = next
		}
		if !moved {
			break
		}
	}
	return cur, nil
}
