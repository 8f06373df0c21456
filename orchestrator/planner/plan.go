package planner

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/orchestrator/sim"
	"github.com/ballastdev/ballast/orchestrator/trace"
)

// Options configures a plan.
type Options struct {
	// Sim is the simulation every figure comes from: elastic pools with
	// their prices, billing and start-up delays, the fixed price, the tick,
	// spot reclaims and checkpoints. Its FixedSlots is ignored.
	Sim sim.Options
	// Sweep sets the quotas, watermarks and wait target of the simulated
	// sweep (its Base is Sim).
	Sweep SweepOptions
	// TuneDays is the window the watermarks are tuned on: the trace's last
	// TuneDays days (default 14; 0 or less uses the whole trace).
	TuneDays int
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
	// CoreOverflow is true when the simulation ran with rule 7 on.
	CoreOverflow bool `json:"core_overflow,omitempty"`
	// Simulated is the whole trace through the live policy at this quota.
	Simulated sim.Result `json:"simulated"`
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
	// Recommendations: the rule of thumb, the cost-optimal level and the
	// simulated sweep's pick, in that order.
	Recommendations []Recommendation `json:"recommendations"`
	// AllFixed is quota sized to the peak and no elastic capacity;
	// AllElastic no quota at all. Both through the same simulation.
	AllFixed   sim.Result `json:"all_fixed"`
	AllElastic sim.Result `json:"all_elastic"`
	// Sweep is every point tried on the tuning window, Best its pick.
	TuneDays   int           `json:"tune_days"`
	WaitTarget time.Duration `json:"wait_target"`
	Sweep      []Point       `json:"sweep"`
	Best       Point         `json:"best"`
	Templates  []TemplateUse `json:"templates"`
}

// Make plans the quota for tr.
func Make(tr trace.Trace, o Options) (Plan, error) {
	if len(tr.Jobs) == 0 {
		return Plan{}, errors.New("planner: the trace has no jobs")
	}
	prices, err := PricesOf(o.Sim.Pools, o.Sim.FixedPricePerSlotHour)
	if err != nil {
		return Plan{}, err
	}
	if o.TuneDays == 0 {
		o.TuneDays = 14
	}
	curve := DemandCurve(tr, DemandStep)
	p := Plan{Trace: tr.Name, Jobs: len(tr.Jobs), Span: tr.Span(), Prices: prices, Peak: curve.Peak(), Curve: curve,
		TuneDays: o.TuneDays, Templates: Templates(tr, prices)}
	if h := curve.Hourly(); len(h) > 0 {
		p.BaseLoad = minOf(h)
	}
	rot, opt := RuleOfThumb(curve), CostOptimal(curve, prices)

	sw := o.Sweep
	sw.Base = o.Sim
	if len(sw.Quotas) == 0 {
		sw.Quotas = withQuotas(spread(p.Peak, quotaSteps), rot, opt)
	}
	if sw.WaitTarget <= 0 {
		sw.WaitTarget = 10 * time.Minute
	}
	p.WaitTarget = sw.WaitTarget
	if p.Best, p.Sweep, err = SimulatedSweep(LastDays(tr, o.TuneDays), sw); err != nil {
		return p, err
	}

	design := Watermarks{High: policy.DefaultConfig().High, Low: policy.DefaultConfig().Low}
	recs := []Recommendation{
		{Method: "rule of thumb", FixedSlots: rot, Watermarks: design,
			Why: fmt.Sprintf("minimum hourly demand %.1f slots x 1.2", p.BaseLoad)},
		{Method: "cost-optimal", FixedSlots: opt, Watermarks: design,
			Why: fmt.Sprintf("demand reaches %d slots %.0f%% of the time = fixed/elastic price", opt, 100*prices.Ratio())},
		{Method: "simulated", FixedSlots: p.Best.FixedSlots, Watermarks: p.Best.Watermarks, CoreOverflow: p.Best.CoreOverflow,
			Why: simulatedWhy(p.Best, sw.WaitTarget, o.TuneDays)},
	}
	for i := range recs {
		f, e := CostOf(curve, recs[i].FixedSlots, prices)
		recs[i].ClosedForm = f + e
		if recs[i].Simulated, err = p.run(tr, o.Sim, recs[i].FixedSlots, recs[i].Watermarks, recs[i].CoreOverflow); err != nil {
			return p, err
		}
	}
	p.Recommendations = recs
	if p.AllFixed, err = sim.Run(tr, sim.AllFixed(tr, o.Sim)); err != nil {
		return p, fmt.Errorf("planner: all-fixed: %w", err)
	}
	if p.AllElastic, err = sim.Run(tr, sim.AllElastic(o.Sim)); err != nil {
		return p, fmt.Errorf("planner: all-elastic: %w", err)
	}
	return p, nil
}

func (p *Plan) run(tr trace.Trace, base sim.Options, quota int, m Watermarks, overflow bool) (sim.Result, error) {
	o := base
	o.FixedSlots = quota
	if o.Config == (policy.Config{}) {
		o.Config = policy.DefaultConfig()
	}
	o.Config.High, o.Config.Low = m.High, m.Low
	o.Config.CoreOverflow = o.Config.CoreOverflow || overflow
	r, err := sim.Run(tr, o)
	if err != nil {
		return r, fmt.Errorf("planner: quota %d: %w", quota, err)
	}
	return r, nil
}

func simulatedWhy(b Point, target time.Duration, days int) string {
	window := fmt.Sprintf("the last %d days", days)
	if days <= 0 {
		window = "the whole trace"
	}
	if !b.MeetsTarget {
		return fmt.Sprintf("no quota and watermarks tried kept p95 waits within %s over %s; this one comes closest", target, window)
	}
	how := ""
	if b.CoreOverflow {
		how = ", with core overflow to on-demand (rule 7) on"
	}
	return fmt.Sprintf("cheapest of the quotas and watermarks tried over %s with p95 waits within %s%s", window, target, how)
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

func withQuotas(qs []int, extra ...int) []int {
	for _, e := range extra {
		found := false
		for _, q := range qs {
			found = found || q == e
		}
		if !found {
			qs = append(qs, e)
		}
	}
	return qs
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = math.Min(m, x)
	}
	return m
}
