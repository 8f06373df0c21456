package planner

import (
	"cmp"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Strategy names the shape of a candidate plan.
type Strategy string

// The strategies a plan is chosen from.
const (
	// StrategyHybrid is a quota with elastic capacity beside it, run by
	// the watermarks and, if on, core overflow.
	StrategyHybrid Strategy = "hybrid"
	// StrategyAllFixed is quota sized to the peak and no elastic capacity.
	StrategyAllFixed Strategy = "all fixed"
	// StrategyAllElastic is no quota: core work goes on-demand at once.
	StrategyAllElastic Strategy = "all elastic"
)

// Candidate is one way to run the capacity that the live controller can
// carry out: every field maps to a config setting.
type Candidate struct {
	Strategy   Strategy `json:"strategy"`
	FixedSlots int      `json:"fixed_slots"`
	// Split is the quota of each fixed pool, for fleets that buy quota per
	// flavor, written "A100=8,T4=4" in the plan's pool order (a string so
	// candidates compare); FixedSlots is then its sum. Empty with one
	// quota.
	Split      string     `json:"split,omitempty"`
	Watermarks Watermarks `json:"watermarks"`
	// CoreOverflow is rule 7 (capacity.core_overflow): a core job that
	// waited CoreMaxWait for a fixed slot runs on on-demand capacity.
	CoreOverflow bool          `json:"core_overflow"`
	CoreMaxWait  time.Duration `json:"core_max_wait"`
}

// String is the candidate in the words of the config.
func (c Candidate) String() string {
	switch c.Strategy {
	case StrategyAllFixed:
		return fmt.Sprintf("all fixed (%d slots)", c.FixedSlots)
	case StrategyAllElastic:
		return "all elastic"
	}
	s := fmt.Sprintf("quota %d, watermarks %.0f/%.0f", c.FixedSlots, 100*c.Watermarks.High, 100*c.Watermarks.Low)
	if c.Split != "" {
		s = fmt.Sprintf("quota %d (%s), watermarks %.0f/%.0f", c.FixedSlots, c.Split, 100*c.Watermarks.High, 100*c.Watermarks.Low)
	}
	if c.CoreOverflow {
		s += fmt.Sprintf(", core overflow after %s", c.CoreMaxWait)
	}
	return s
}

// options is base set up to run c.
func (c Candidate) options(base sim.Options, whole trace.Trace) sim.Options {
	switch c.Strategy {
	case StrategyAllFixed:
		o := sim.AllFixed(whole, base)
		if c.Split != "" {
			o.FixedSlotsByPool = splitQuotas(c.Split)
		} else if len(o.FixedSlotsByPool) == 0 {
			o.FixedSlots = c.FixedSlots
		}
		return o
	case StrategyAllElastic:
		return sim.AllElastic(base)
	}
	o := sim.Hybrid(base, c.Watermarks.High, c.Watermarks.Low)
	o.FixedSlots = c.FixedSlots
	if c.Split != "" {
		o.FixedSlots, o.FixedSlotsByPool = 0, splitQuotas(c.Split)
	}
	o.Config.CoreOverflow = c.CoreOverflow
	if c.CoreOverflow {
		o.Config.CoreMaxWait = c.CoreMaxWait
	}
	return o
}

// Verdict is whether a simulated candidate is one a team can live with.
type Verdict struct {
	// Feasible: every job ran, and the p95 waits of core and of burst jobs
	// are within the target. Only feasible plans are ranked by cost: a
	// plan that leaves work queued looks cheap only because the work
	// waited.
	Feasible bool `json:"feasible"`
	// Why says what an infeasible plan missed.
	Why string `json:"why,omitempty"`
}

// judge gives r's verdict against target.
func judge(r sim.Result, target time.Duration) Verdict {
	switch {
	case r.Stopped != "":
		return Verdict{Why: r.Stopped}
	case r.Unfinished > 0:
		return Verdict{Why: fmt.Sprintf("%d jobs never ran", r.Unfinished)}
	case r.CoreWait.P95 > target:
		return Verdict{Why: fmt.Sprintf("core wait p95 %s is over the %s target", dur(r.CoreWait.P95), target)}
	case r.ElasticWait.P95 > target:
		return Verdict{Why: fmt.Sprintf("burst wait p95 %s is over the %s target", dur(r.ElasticWait.P95), target)}
	}
	// With a quota per flavor the waits are held pool by pool too: one
	// model's jobs waiting an hour is no plan, however quick the others.
	if fixedPools(r) > 1 {
		for _, u := range r.Pools {
			switch {
			case u.CoreWait.P95 > target:
				return Verdict{Why: fmt.Sprintf("core wait p95 %s on pools.%s is over the %s target", dur(u.CoreWait.P95), u.Name, target)}
			case u.BurstWait.P95 > target:
				return Verdict{Why: fmt.Sprintf("burst wait p95 %s on pools.%s is over the %s target", dur(u.BurstWait.P95), u.Name, target)}
			}
		}
	}
	return Verdict{Feasible: true}
}

// fixedPools counts the fixed pools a run reports.
func fixedPools(r sim.Result) int {
	n := 0
	for _, u := range r.Pools {
		if u.Kind == policy.PoolFixed {
			n++
		}
	}
	return n
}

// Point is one simulated candidate.
type Point struct {
	Candidate
	Result sim.Result `json:"result"`
	Verdict
	// Took is the simulation's wall time.
	Took time.Duration `json:"took"`
}

// better orders points: feasible before infeasible. Feasible ones by cost,
// then fewer fixed slots (less commitment), then watermarks nearer the
// design's, then overflow off (the smaller config change), then a longer
// overflow wait (fewer premium hours). Infeasible ones by how near they
// came: a run that went to the end before one stopped early (its cost and
// waits cover only part of the trace, so they are not compared), a run
// stopped later (the backlog grew slower) before one stopped sooner, and
// runs that went to the end by the jobs left and the worst p95 wait. So a
// search that starts among hopeless quotas is led towards feasible ones.
// Among equally hopeless runs the larger quota goes first, for the same
// reason.
func better(a, b Point) int {
	if a.Feasible != b.Feasible {
		if a.Feasible {
			return -1
		}
		return 1
	}
	if !a.Feasible {
		as, bs := a.Result.Stopped != "", b.Result.Stopped != ""
		switch {
		case as != bs:
			if bs {
				return -1
			}
			return 1
		case as:
			// Stopped later, then with more done by then: a stop is
			// checked on ticks, so several quotas may stop at one time.
			if c := cmp.Compare(b.Result.SimulatedSeconds, a.Result.SimulatedSeconds); c != 0 {
				return c
			}
			if c := cmp.Compare(b.Result.Jobs, a.Result.Jobs); c != 0 {
				return c
			}
			return cmp.Compare(b.FixedSlots, a.FixedSlots)
		default:
			if c := cmp.Compare(a.Result.Unfinished, b.Result.Unfinished); c != 0 {
				return c
			}
			if c := cmp.Compare(worstWait(a), worstWait(b)); c != 0 {
				return c
			}
		}
		return cmp.Compare(b.FixedSlots, a.FixedSlots)
	}
	if c := cmp.Compare(a.Result.Cost.Total, b.Result.Cost.Total); c != 0 {
		return c
	}
	if c := cmp.Compare(a.FixedSlots, b.FixedSlots); c != 0 {
		return c
	}
	if c := cmp.Compare(distance(a.Watermarks), distance(b.Watermarks)); c != 0 {
		return c
	}
	if a.CoreOverflow != b.CoreOverflow {
		if !a.CoreOverflow {
			return -1
		}
		return 1
	}
	return cmp.Compare(b.CoreMaxWait, a.CoreMaxWait)
}

func designWatermarks() Watermarks {
	d := policy.DefaultConfig()
	return Watermarks{High: d.High, Low: d.Low}
}
