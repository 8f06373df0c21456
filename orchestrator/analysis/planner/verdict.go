package planner

import (
	"fmt"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// Summary is a chosen plan in the figures a reader acts on; the plan's
// `recommended` object in JSON.
type Summary struct {
	Strategy      Strategy   `json:"strategy"`
	FixedSlots    int        `json:"fixed_slots"`
	Watermarks    Watermarks `json:"watermarks"`
	CoreOverflow  bool       `json:"core_overflow"`
	CoreMaxWaitS  float64    `json:"core_max_wait_s"`
	Cost          float64    `json:"cost"`
	CoreWaitP95S  float64    `json:"core_wait_p95_s"`
	BurstWaitP95S float64    `json:"burst_wait_p95_s"`
	FixedIdle     float64    `json:"fixed_idle_share"`
	Feasible      bool       `json:"feasible"`
	Why           string     `json:"why,omitempty"`
	// OfflineOptimumCost is the offline optimum's cost, and OfOptimum the
	// plan's cost as a multiple of it: how much headroom is left.
	OfflineOptimumCost float64 `json:"offline_optimum_cost"`
	OfOptimum          float64 `json:"multiple_of_optimum"`
	// SavingVsAllFixed is the share of the all-fixed cost the plan saves.
	SavingVsAllFixed float64 `json:"saving_vs_all_fixed"`
	// Config is the config to paste to run the plan live; empty for a plan
	// that is not feasible.
	Config string `json:"config"`
	// Pools is the plan pool by pool: each fixed pool's quota (one per
	// flavor in a fleet that buys quota per flavor) and every pool's cost
	// and the p95 waits of the jobs that first started on it.
	Pools []PoolSummary `json:"pools"`
}

// PoolSummary is one pool of a plan.
type PoolSummary struct {
	Pool          string            `json:"pool"`
	Kind          policy.PoolKind   `json:"kind"`
	Labels        map[string]string `json:"labels,omitempty"`
	FixedSlots    int               `json:"fixed_slots"`
	Cost          float64           `json:"cost"`
	CoreWaitP95S  float64           `json:"core_wait_p95_s"`
	BurstWaitP95S float64           `json:"burst_wait_p95_s"`
}

func (p *Plan) summarize(pt Point) Summary {
	r := pt.Result
	s := Summary{Strategy: pt.Strategy, FixedSlots: r.FixedSlots, Watermarks: pt.Watermarks, CoreOverflow: pt.CoreOverflow,
		CoreMaxWaitS: pt.CoreMaxWait.Seconds(), Cost: r.Cost.Total, CoreWaitP95S: r.CoreWait.P95.Seconds(),
		BurstWaitP95S: r.ElasticWait.P95.Seconds(), FixedIdle: r.FixedIdleShare, Feasible: pt.Feasible, Why: pt.Why,
		OfflineOptimumCost: p.Optimum.Cost}
	if p.Optimum.Cost > 0 {
		s.OfOptimum = r.Cost.Total / p.Optimum.Cost
	}
	if p.AllFixed.Cost.Total > 0 {
		s.SavingVsAllFixed = 1 - r.Cost.Total/p.AllFixed.Cost.Total
	}
	if pt.Feasible {
		// Nothing to paste for a plan that misses the target.
		s.Config = p.configFor(pt.Candidate)
	}
	for _, u := range r.Pools {
		s.Pools = append(s.Pools, PoolSummary{Pool: u.Name, Kind: u.Kind, Labels: u.Labels, FixedSlots: u.FixedSlots, Cost: u.Cost,
			CoreWaitP95S: u.CoreWait.P95.Seconds(), BurstWaitP95S: u.BurstWait.P95.Seconds()})
	}
	return s
}

// configFor is the config that runs c live, in the config file's keys:
// only settings the live controller accepts. A fixed pool cannot have zero
// slots, so no quota means no fixed pool; all fixed means no elastic pools,
// as it was simulated.
func (p *Plan) configFor(c Candidate) string {
	pool := p.fixedPool
	if pool == "" {
		pool = defaultFixedPool
	}
	var parts []string
	switch {
	case c.Split != "":
		for _, q := range quotasOf(c.Split) {
			if q.Slots == 0 {
				parts = append(parts, fmt.Sprintf("no quota for %s (remove pools.%s)", q.Pool, q.Pool))
				continue
			}
			parts = append(parts, fmt.Sprintf("pools.%s.slots: %d", q.Pool, q.Slots))
		}
	case (c.Strategy == StrategyAllElastic || c.FixedSlots == 0) && len(p.flavorNames()) > 0:
		parts = append(parts, "no fixed pools (remove "+strings.Join(prefixed("pools.", p.flavorNames()), ", ")+")")
	case c.Strategy == StrategyAllFixed && len(p.flavorNames()) > 0:
		parts = append(parts, "each flavor at its own peak")
	case c.Strategy == StrategyAllElastic || c.FixedSlots == 0:
		parts = append(parts, fmt.Sprintf("no fixed pool (remove pools.%s)", pool))
	default:
		parts = append(parts, fmt.Sprintf("pools.%s.slots: %d", pool, c.FixedSlots))
	}
	if c.Strategy == StrategyAllFixed {
		if len(p.elasticPools) > 0 {
			parts = append(parts, "no elastic pools (remove "+strings.Join(prefixed("pools.", p.elasticPools), ", ")+")")
		}
		return strings.Join(parts, "; ")
	}
	if c.Strategy == StrategyAllElastic {
		return strings.Join(append(parts, "capacity.core_overflow: true", "capacity.core_max_wait: 0s"), "; ")
	}
	parts = append(parts, fmt.Sprintf("watermarks.high: %.2f", c.Watermarks.High), fmt.Sprintf("watermarks.low: %.2f", c.Watermarks.Low),
		fmt.Sprintf("capacity.core_overflow: %t", c.CoreOverflow))
	if c.CoreOverflow {
		parts = append(parts, fmt.Sprintf("capacity.core_max_wait: %s", c.CoreMaxWait))
	}
	return strings.Join(parts, "; ")
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// VerdictLine is the plan's last word: what to do, the config to paste,
// and how it compares.
func (p *Plan) VerdictLine() string {
	r := p.Recommended
	var b strings.Builder
	if !r.Feasible {
		fmt.Fprintf(&b, "no plan tried meets the %s wait target on the whole history (%s); closest: ", p.WaitTarget, r.Why)
	} else {
		b.WriteString("verdict: ")
	}
	fmt.Fprintf(&b, "%s at %.2f", p.Best.Candidate, r.Cost)
	fmt.Fprintf(&b, " (%.3fx the offline optimum %.2f at %d slots; %.0f%% below all fixed; p95 waits core %s, burst %s)",
		r.OfOptimum, r.OfflineOptimumCost, p.Optimum.FixedSlots, 100*r.SavingVsAllFixed,
		dur(secondsOf(r.CoreWaitP95S)), dur(secondsOf(r.BurstWaitP95S)))
	b.WriteString(p.poolsPastTarget())
	if r.Config != "" {
		fmt.Fprintf(&b, ". Config: %s.", r.Config)
	} else {
		b.WriteString(". Nothing to paste: loosen --wait-target, or allow core overflow, or add capacity.")
	}
	if p.RunnerUp != nil {
		ru := p.RunnerUp
		fmt.Fprintf(&b, " Second: %s at %.2f (%.3fx).", ru.describe(), ru.Cost, ru.OfOptimum)
	}
	return b.String()
}

func (s Summary) describe() string {
	c := Candidate{Strategy: s.Strategy, FixedSlots: s.FixedSlots, Watermarks: s.Watermarks, CoreOverflow: s.CoreOverflow,
		CoreMaxWait: secondsOf(s.CoreMaxWaitS)}
	return c.String()
}

// poolsPastTarget names the pools of the pick whose own p95 wait, of core
// or of burst work, is past the wait target. The target is checked on
// all jobs together, so a few jobs that only one pool's machines hold
// (the jobs of the shapes advice) can wait days there and still leave
// the plan feasible: the verdict must not read as if no job waited.
func (p *Plan) poolsPastTarget() string {
	target := p.WaitTarget.Seconds()
	var parts []string
	for _, ps := range p.Recommended.Pools {
		var w []string
		if ps.CoreWaitP95S > target {
			w = append(w, "core "+dur(secondsOf(ps.CoreWaitP95S)))
		}
		if ps.BurstWaitP95S > target {
			w = append(w, "burst "+dur(secondsOf(ps.BurstWaitP95S)))
		}
		if len(w) > 0 {
			parts = append(parts, fmt.Sprintf("%s (p95 %s)", ps.Pool, strings.Join(w, ", ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("; but past the target on %s: the target holds over all jobs, not in every pool", strings.Join(parts, " and "))
}
