package planner

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Options configures a plan.
type Options struct {
	// Sim is the simulation every figure comes from: elastic pools with
	// their prices, billing and start-up delays, the fixed price, the tick,
	// spot reclaims and checkpoints. Its FixedSlots, watermarks and core
	// overflow settings are what the plan chooses.
	Sim sim.Options
	// Sweep sets the wait target, the watermarks tried, parallelism and
	// progress reports (its Base and Quotas are not used by Make).
	Sweep SweepOptions
	// TuneDays is the window the search runs on first: the trace's last
	// TuneDays days (0 means the default, 14; a negative value uses the
	// whole trace). Every
	// plan that does well there is simulated again on the whole history,
	// and only the whole history decides.
	TuneDays int
	// WithoutCoreOverflow keeps rule 7 off in every candidate, for teams
	// that will not pay on-demand prices for core work.
	WithoutCoreOverflow bool
	// FixedPool names the fixed pool in the config snippet of the verdict
	// (default "fixed").
	FixedPool string
}

// Recommendation is one way of sizing the quota, and what it would cost.
type Recommendation struct {
	Method     string `json:"method"`
	FixedSlots int    `json:"fixed_slots"`
	Why        string `json:"why"`
	// ClosedForm is fixed + elastic cost with elastic capacity always
	// there at once (CostOf) over the trace.
	ClosedForm float64 `json:"closed_form_cost"`
	// Watermarks are those the simulation used.
	Watermarks Watermarks `json:"watermarks"`
	// CoreOverflow is true when the simulation ran with rule 7 on, after
	// CoreMaxWait.
	CoreOverflow bool          `json:"core_overflow,omitempty"`
	CoreMaxWait  time.Duration `json:"core_max_wait,omitempty"`
	// Simulated is the whole trace through the live policy at this quota.
	Simulated sim.Result `json:"simulated"`
	Verdict
}

// Plan is the planner's answer for one trace.
type Plan struct {
	Trace    string        `json:"trace"`
	Jobs     int           `json:"jobs"`
	Span     time.Duration `json:"span"`
	Prices   Prices        `json:"prices"`
	Peak     int           `json:"peak_demand"`
	BaseLoad float64       `json:"base_load"` // lowest hourly average demand
	Curve    Curve         `json:"-"`
	// Optimum is the offline optimum for the whole trace: the cheapest
	// static quota with elastic capacity there the instant it is needed,
	// and at least the floor that jobs no elastic machine can hold set.
	Optimum Optimum `json:"offline_optimum"`
	// Shapes are the trace's jobs by shape and where each can run; the
	// ones only the quota can hold set the floor of every search.
	Shapes Shapes `json:"shapes"`
	// Recommended is the cheapest feasible candidate on the whole history;
	// RunnerUp the next one of another shape, if any.
	Recommended Summary  `json:"recommended"`
	RunnerUp    *Summary `json:"runner_up,omitempty"`
	// Recommendations: the rule of thumb, the cost-optimal level, the
	// offline optimum's quota and the search's pick, each simulated on the
	// whole trace.
	Recommendations []Recommendation `json:"recommendations"`
	// Relaxed are the label keys the trace's jobs require that no pool
	// declares: planned as if every worker carried them (see
	// RelaxUnknownLabels).
	Relaxed []string `json:"relaxed_labels,omitempty"`
	// FlavorStart is where the search of a fleet of flavors started: each
	// fixed pool at the offline optimum of its own jobs. Empty with one
	// quota.
	FlavorStart Quotas `json:"flavor_start,omitempty"`
	// FlavorOptima are each flavor's offline optimum, in FlavorStart's
	// order; Optimum is their sum.
	FlavorOptima []Optimum `json:"flavor_optima,omitempty"`
	// ShapeAdvice names jobs the pools' machines cannot hold and what to
	// change, with a suggested pool simulated.
	ShapeAdvice []ShapeAdvice `json:"shape_advice,omitempty"`
	// Gap says where the recommended plan's cost over the optimum comes
	// from (one quota only).
	Gap *Gap `json:"gap_to_optimum,omitempty"`
	// AllFixed is quota sized to the peak and no elastic capacity;
	// AllElastic no quota at all. Both through the same simulation.
	AllFixed   sim.Result `json:"all_fixed"`
	AllElastic sim.Result `json:"all_elastic"`
	// Sweep is every point tried on the tuning window, History every one
	// simulated on the whole trace, Best the pick.
	TuneDays   int           `json:"tune_days"`
	WaitTarget time.Duration `json:"wait_target"`
	Sweep      []Point       `json:"sweep"`
	History    []Point       `json:"history"`
	Best       Point         `json:"best"`
	Templates  []TemplateUse `json:"templates"`
	// Simulations is how many runs the search made, Took its wall time.
	Simulations int           `json:"simulations"`
	Took        time.Duration `json:"took"`
	// fixedPool and elasticPools name the pools in the verdict's config;
	// pools are all of them, for the report.
	fixedPool    string
	elasticPools []string
	pools        []policy.Pool
}

// flavorNames names the plan's flavors, none with one quota.
func (p *Plan) flavorNames() []string {
	var out []string
	for _, f := range Flavors(p.pools) {
		out = append(out, f.Name)
	}
	return out
}

// Make plans the quota for tr.
//
// The search runs on the tuning window first, where simulations are
// cheaper: the overflow wait and then the watermark pair at the window's
// offline optimum, then a quota search for the best of them and for the
// best plan without overflow. The best window plans, all-fixed, all-elastic and the
// closed forms are then simulated on the whole history, and a last quota
// search there lands within a slot of its best. Only plans that meet the wait
// target on the whole history, and leave nothing queued, are ranked by
// cost.
func Make(tr trace.Trace, o Options) (Plan, error) {
	began := time.Now()
	if len(tr.Jobs) == 0 {
		return Plan{}, errors.New("planner: the trace has no jobs")
	}
	tr, relaxed := RelaxUnknownLabels(tr, o.Sim.Pools)
	prices, err := PricesOf(o.Sim.Pools, o.Sim.FixedPricePerSlotHour)
	if err != nil {
		return Plan{}, err
	}
	if o.TuneDays == 0 {
		o.TuneDays = 14
	}
	sw := o.Sweep
	if sw.WaitTarget <= 0 {
		sw.WaitTarget = 10 * time.Minute
	}
	if len(sw.Watermarks) == 0 {
		sw.Watermarks = DefaultWatermarks
	}
	if o.FixedPool == "" {
		o.FixedPool = defaultFixedPool
	}
	curve := DemandCurve(tr, DemandStep)
	levels := DemandLevels(tr)
	shapes := ShapesOf(tr, o.Sim.Pools)
	p := Plan{Trace: tr.Name, Jobs: len(tr.Jobs), Span: tr.Span(), Prices: prices, Peak: levels.Peak(), Curve: curve,
		TuneDays: o.TuneDays, WaitTarget: sw.WaitTarget, Templates: Templates(tr, prices), Shapes: shapes, Relaxed: relaxed,
		Optimum:   OfflineOptimumAbove(levels, prices, shapes.Floor(!o.WithoutCoreOverflow, 0), ElasticMachine(o.Sim.Pools, prices)),
		fixedPool: o.FixedPool}
	p.pools = o.Sim.Pools
	for _, pool := range o.Sim.Pools {
		if pool.Kind.Elastic() {
			p.elasticPools = append(p.elasticPools, pool.Name)
		}
	}
	if h := curve.Hourly(); len(h) > 0 {
		p.BaseLoad = minOf(h)
	}

	clock := &runClock{start: began, now: time.Now, report: sw.Progress, parallel: sw.Parallel}
	if clock.parallel <= 0 {
		clock.parallel = runtime.GOMAXPROCS(0)
	}
	if flavors := Flavors(o.Sim.Pools); flavors != nil {
		// A quota per flavor: searched on the whole history only, since
		// every flavor is a coordinate of its own.
		p.TuneDays = -1
		fs := flavorsOf(tr, o.Sim.Pools, prices)
		p.Optimum, p.FlavorOptima = flavorOptima(fs, o.Sim.Pools)
		elasticOnlyOf(tr, flavors, o.Sim.Pools, prices.FixedPerSlotHour).addTo(&p.Optimum)
		whole := newEvaluator(tr, tr, flavorBase(o.Sim, flavors), sw.WaitTarget, sw.Parallel, clock)
		whole.shapes = shapes
		if err := p.searchFlavors(whole, o, sw, fs); err != nil {
			return p, err
		}
		if p.ShapeAdvice, err = p.adviseShapes(tr, o, sw, clock); err != nil {
			return p, err
		}
		p.History = whole.points()
		p.Simulations = clock.done
		p.Took = time.Since(began)
		return p, nil
	}
	window := LastDays(tr, o.TuneDays)
	whole := newEvaluator(tr, tr, o.Sim, sw.WaitTarget, sw.Parallel, clock)
	whole.shapes = shapes
	tune := whole
	if len(window.Jobs) != len(tr.Jobs) || window.Span() != tr.Span() {
		tune = newEvaluator(window, tr, o.Sim, sw.WaitTarget, sw.Parallel, clock)
		// The floor is the whole history's: a window plan is only a hint
		// for the whole history, which must run every job.
		tune.shapes = shapes
	}
	// The most simulations the stages of search may run, so progress
	// reports an "at most" and a time left for the whole plan.
	waits := len(overflowWaits(sw.WaitTarget, o.Sim))
	wl := DemandLevels(window)
	wpeak := wl.Peak()
	clock.expected = 1 + waits + len(sw.Watermarks) + 2*searchBound(max(1, wpeak/8)) +
		5 + waits + searchBound(max(2, p.Peak/64)) + 3 + searchBound(1)
	if err := p.search(tune, whole, wl, o, sw); err != nil {
		return p, err
	}
	g := gapOf(levels, p.Prices, p.Optimum.Machine, p.Best.FixedSlots, p.Best.Result, o.Sim.Pools)
	p.Gap = &g
	if p.ShapeAdvice, err = p.adviseShapes(tr, o, sw, clock); err != nil {
		return p, err
	}
	small, err := p.adviseSmallMachines(tr, o, sw, clock)
	if err != nil {
		return p, err
	}
	if small != nil {
		p.ShapeAdvice = append(p.ShapeAdvice, *small)
	}
	p.Sweep = tune.points()
	p.History = whole.points()
	p.Simulations = clock.done
	p.Took = time.Since(began)
	return p, nil
}

func (p *Plan) search(tune, whole *evaluator, wl Levels, o Options, sw SweepOptions) error {
	design := designWatermarks()
	wpeak, wopt := wl.Peak(), OfflineOptimumAbove(wl, p.Prices, p.Optimum.Floor, p.Optimum.Machine).FixedSlots
	waits := overflowWaits(sw.WaitTarget, o.Sim)
	// 1. The overflow wait, then the watermarks, at the window's offline
	// optimum, the quota the best plans land near: one coordinate at a
	// time, since the two barely interact and every simulation counts.
	// Each candidate starts at its own floor if that is higher: without
	// overflow every core job needs the quota, and a burst job only the
	// quota holds needs room under the high watermark.
	at := Candidate{Strategy: StrategyHybrid, FixedSlots: wopt, Watermarks: design}
	variants := []Candidate{tune.lift(at)}
	if !o.WithoutCoreOverflow {
		for _, w := range waits {
			at.CoreOverflow, at.CoreMaxWait = true, w
			variants = append(variants, tune.lift(at))
		}
	}
	tune.clock.expect("overflow waits on the tuning window", len(variants)+len(sw.Watermarks))
	if _, err := tune.eval(variants...); err != nil {
		return err
	}
	b, _ := tune.best(nil)
	variants = variants[:0]
	for _, m := range sw.Watermarks {
		c := b.Candidate
		c.Watermarks = m
		variants = append(variants, tune.lift(c))
	}
	tune.clock.expect("watermarks on the tuning window", len(variants))
	if _, err := tune.eval(variants...); err != nil {
		return err
	}
	// 2. The quota for the best of them, and for the best plan without
	// overflow, which needs a quota near the core peak and so may lie far
	// from the optimum. Hopeless quotas stop early (StopOverP95).
	for _, ov := range []bool{true, false} {
		st, ok := tune.best(func(pt Point) bool { return pt.CoreOverflow == ov })
		if !ok {
			continue
		}
		// With overflow the best quota lies near the optimum, where the
		// search starts; without it, near the core peak, which may be far.
		step := max(1, wpeak/8)
		if st.CoreOverflow {
			step = max(1, wpeak/16)
		}
		if _, err := tune.refine("quota search on the tuning window", st.Candidate, step, wpeak, waits, sw.Watermarks); err != nil {
			return err
		}
	}

	// 4. The whole history decides. It sees all fixed, all elastic, the
	// best window plans, and the window's best watermarks at the whole
	// history's offline optimum with and without overflow (at every
	// overflow wait): the window may
	// be unlike the rest (a busy last fortnight wants a quota the year does
	// not), so its quota is only a hint.
	b, _ = tune.best(nil)
	cands := []Candidate{
		{Strategy: StrategyAllFixed, FixedSlots: p.Peak, Watermarks: Watermarks{High: 1, Low: configOf(o.Sim).Low}},
		{Strategy: StrategyAllElastic},
	}
	for _, pt := range topDistinct(tune.points(), 2) {
		cands = append(cands, pt.Candidate)
	}
	at = Candidate{Strategy: StrategyHybrid, FixedSlots: p.Optimum.FixedSlots, Watermarks: b.Watermarks}
	cands = append(cands, whole.lift(at))
	if !o.WithoutCoreOverflow {
		// With every wait: the one the window liked best may not hold
		// over the whole history, where the longest can put core p95 just
		// over the target at the optimum's quota and the quota search
		// from there then climbs away from it, while a shorter wait there
		// is feasible. (The evaluator runs a repeated candidate once.)
		for _, w := range waits {
			at.CoreOverflow, at.CoreMaxWait = true, w
			cands = append(cands, whole.lift(at))
		}
	}
	whole.clock.expect("the whole history", len(cands))
	pts, err := whole.eval(cands...)
	if err != nil {
		return err
	}
	p.AllFixed, p.AllElastic = pts[0].Result, pts[1].Result
	// 5. A last quota search on the whole history, from its best hybrid
	// with overflow and its best without: the two have their best quotas
	// far apart (near the optimum, near the core peak), and a search from
	// one never reaches the other.
	for _, ov := range []bool{true, false} {
		hb, ok := whole.best(func(pt Point) bool { return pt.Strategy == StrategyHybrid && pt.CoreOverflow == ov })
		if !ok {
			continue
		}
		if _, err := whole.refine("quota search on the whole history", hb.Candidate, max(2, p.Peak/64), p.Peak, waits, sw.Watermarks); err != nil {
			return err
		}
	}
	// 6. The closed forms at the best hybrid's settings, for comparison
	// (and as candidates: one may yet be the cheapest).
	hb, _ := whole.best(func(pt Point) bool { return pt.Strategy == StrategyHybrid })
	rot, opt := RuleOfThumb(p.Curve), CostOptimal(p.Curve, p.Prices)
	closed := []struct {
		method string
		quota  int
		why    string
	}{
		{"rule of thumb", rot, fmt.Sprintf("minimum hourly demand %.1f slots x 1.2", p.BaseLoad)},
		{"cost-optimal", opt, fmt.Sprintf("demand reaches %d slots %.0f%% of the time = fixed/elastic price", opt, 100*p.Prices.Ratio())},
		{"offline optimum", p.Optimum.FixedSlots, fmt.Sprintf("the cheapest quota if elastic capacity came the instant it was needed: %.2f", p.Optimum.Cost)},
	}
	cands = cands[:0]
	for _, c := range closed {
		k := hb.Candidate
		k.FixedSlots = c.quota
		cands = append(cands, k)
	}
	whole.clock.expect("the closed forms on the whole history", len(cands))
	if pts, err = whole.eval(cands...); err != nil {
		return err
	}
	// A closed form may have won without its neighbours tried: refine it
	// too, so the pick is within a slot of the best quota for its settings.
	if best, _ := whole.best(nil); best.Strategy == StrategyHybrid {
		if _, err := whole.searchQuota("quota search on the whole history", best.Candidate, best.FixedSlots, 1, p.Peak); err != nil {
			return err
		}
	}
	best, _ := whole.best(nil)
	p.Best = best
	p.Recommended = p.summarize(best)
	if ru, ok := whole.best(func(pt Point) bool { return pt.Feasible && otherShape(pt, best) }); ok {
		s := p.summarize(ru)
		p.RunnerUp = &s
	}
	for i, c := range closed {
		pt := pts[i]
		f, e := CostOf(p.Curve, c.quota, p.Prices)
		p.Recommendations = append(p.Recommendations, Recommendation{Method: c.method, FixedSlots: c.quota, Why: c.why,
			ClosedForm: f + e, Watermarks: pt.Watermarks, CoreOverflow: pt.CoreOverflow, CoreMaxWait: pt.CoreMaxWait,
			Simulated: pt.Result, Verdict: pt.Verdict})
	}
	f, e := CostOf(p.Curve, best.FixedSlots, p.Prices)
	p.Recommendations = append(p.Recommendations, Recommendation{Method: "simulated", FixedSlots: best.FixedSlots,
		Why: simulatedWhy(best, sw.WaitTarget), ClosedForm: f + e, Watermarks: best.Watermarks,
		CoreOverflow: best.CoreOverflow, CoreMaxWait: best.CoreMaxWait, Simulated: best.Result, Verdict: best.Verdict})
	return nil
}

// otherShape reports whether pt is another kind of plan than best: the
// runner-up worth naming is another strategy, or the same with core
// overflow the other way, not the same plan a slot or a watermark away.
func otherShape(pt, best Point) bool {
	return pt.Strategy != best.Strategy || pt.CoreOverflow != best.CoreOverflow
}

func simulatedWhy(b Point, target time.Duration) string {
	if !b.Feasible {
		return fmt.Sprintf("no plan tried met the %s wait target on the whole history (%s); this one comes closest", target, b.Why)
	}
	how := ""
	if b.CoreOverflow {
		how = fmt.Sprintf(", with core work overflowing to on-demand after %s (rule 7)", b.CoreMaxWait)
	}
	return fmt.Sprintf("cheapest plan tried that meets the %s p95 wait target over the whole history and leaves nothing queued%s", target, how)
}

// ElasticMachine is the smallest machine, in slots, of the elastic pools
// at the closed forms' elastic price (PricesOf): on-demand pools when there
// are any, else spot. It is 1 when no pool matches.
func ElasticMachine(pools []policy.Pool, p Prices) int {
	kind := policy.PoolSpot
	if slices.ContainsFunc(pools, func(q policy.Pool) bool { return q.Kind == policy.PoolOnDemand }) {
		kind = policy.PoolOnDemand
	}
	m := 0
	for _, q := range pools {
		if q.Kind == kind && q.PricePerSlotHour == p.ElasticPerSlotHour && (m == 0 || machineOf(q) < m) {
			m = machineOf(q)
		}
	}
	return max(m, 1)
}

// PricesOf reads the closed forms' prices from pools: the fixed pool's price
// (fixedPrice when the pool has none), and the cheapest on-demand price, or
// the cheapest spot price without an on-demand pool. Spot may be cheaper,
// but it is not always there; the closed forms assume elastic capacity that
// is.
func PricesOf(pools []policy.Pool, fixedPrice float64) (Prices, error) {
	p := Prices{FixedPerSlotHour: fixedPrice}
	od, spot := math.Inf(1), math.Inf(1)
	for _, pool := range pools {
		switch pool.Kind {
		case policy.PoolFixed:
			if pool.PricePerSlotHour > 0 {
				p.FixedPerSlotHour = pool.PricePerSlotHour
			}
		case policy.PoolOnDemand:
			od = math.Min(od, pool.PricePerSlotHour)
		case policy.PoolSpot:
			spot = math.Min(spot, pool.PricePerSlotHour)
		}
	}
	switch {
	case !math.IsInf(od, 1):
		p.ElasticPerSlotHour = od
	case !math.IsInf(spot, 1):
		p.ElasticPerSlotHour = spot
	default:
		return p, errors.New("planner: no elastic pool is configured, so there is nothing to weigh the quota against")
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("planner: %w", err)
	}
	return p, nil
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = math.Min(m, x)
	}
	return m
}
