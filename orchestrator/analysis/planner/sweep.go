package planner

import (
	"errors"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Watermarks is one high/low pair the search tries.
type Watermarks struct {
	High float64 `json:"high"`
	Low  float64 `json:"low"`
}

// DefaultWatermarks are the pairs the search tries when none are given: the
// design's 70/40 and its neighbours, each keeping a 0.3 gap against flapping.
var DefaultWatermarks = []Watermarks{{0.6, 0.3}, {0.7, 0.4}, {0.8, 0.5}, {0.9, 0.6}}

// SweepOptions configures a simulated sweep, and the search of Make.
type SweepOptions struct {
	// Base is the simulation: elastic pools, prices, tick, spot reclaims,
	// checkpoints. Its FixedSlots and watermarks are what the sweep varies.
	Base sim.Options
	// Quotas to try; empty means an even spread from 0 to the peak.
	Quotas []int
	// Watermarks to try; empty means DefaultWatermarks.
	Watermarks []Watermarks
	// WaitTarget bounds the p95 wait of burst and of core jobs; the
	// cheapest point within it wins (default 10 minutes).
	WaitTarget time.Duration
	// Parallel bounds simulations run at once (default GOMAXPROCS).
	Parallel int
	// Progress, when set, is told after each simulation how far the run
	// is and how long it may still take: a month-long trace takes a while.
	Progress func(Progress)
	// TryCoreOverflow also tries every point with rule 7 on, after the
	// policy's CoreMaxWait.
	TryCoreOverflow bool
}

// quotaSteps is how many quota sizes the default spread tries.
const quotaSteps = 12

// defaultFixedPool names the quota's pool in config snippets when the
// caller does not.
const defaultFixedPool = "fixed"

// SimulatedSweep runs the trace through the live policy for every quota and
// watermark pair of a grid and returns every point and the best: the
// cheapest feasible one, or, if none is, the one nearest the target. Runs
// are deterministic (sim is), so the answer is too. Make searches instead
// of sweeping a grid; this serves a quick look at given quotas.
func SimulatedSweep(tr trace.Trace, o SweepOptions) (best Point, all []Point, err error) {
	if len(tr.Jobs) == 0 {
		return Point{}, nil, errors.New("planner: the trace has no jobs")
	}
	if o.WaitTarget <= 0 {
		o.WaitTarget = 10 * time.Minute
	}
	quotas := o.Quotas
	if len(quotas) == 0 {
		quotas = spread(DemandCurve(tr, DemandStep).Peak(), quotaSteps)
	}
	marks := o.Watermarks
	if len(marks) == 0 {
		marks = DefaultWatermarks
	}
	overflow := []bool{false}
	if o.TryCoreOverflow {
		overflow = append(overflow, true)
	}
	wait := configOf(o.Base).CoreMaxWait
	var cs []Candidate
	for _, q := range quotas {
		for _, m := range marks {
			for _, ov := range overflow {
				c := Candidate{Strategy: StrategyHybrid, FixedSlots: q, Watermarks: m, CoreOverflow: ov}
				if ov {
					c.CoreMaxWait = wait
				}
				cs = append(cs, c)
			}
		}
	}
	clock := &runClock{start: time.Now(), now: time.Now, report: o.Progress, parallel: o.Parallel, expected: len(cs), stage: "sweep"}
	ev := newEvaluator(tr, tr, o.Base, o.WaitTarget, o.Parallel, clock)
	if all, err = ev.eval(cs...); err != nil {
		return Point{}, nil, err
	}
	return slices.MinFunc(all, better), all, nil
}

func configOf(o sim.Options) policy.Config {
	if o.Config.IsZero() {
		return policy.DefaultConfig()
	}
	return o.Config
}

func worstWait(p Point) time.Duration { return max(p.Result.ElasticWait.P95, p.Result.CoreWait.P95) }

func distance(m Watermarks) float64 {
	d := m.High - 0.7
	e := m.Low - 0.4
	return d*d + e*e
}

// spread returns about n quotas from 0 to peak, evenly spaced, peak included.
func spread(peak, n int) []int {
	if peak <= 0 {
		return []int{0}
	}
	var out []int
	for i := 0; i <= n; i++ {
		q := peak * i / n
		if len(out) == 0 || out[len(out)-1] != q {
			out = append(out, q)
		}
	}
	return out
}

// LastDays returns the part of tr that runs in its last days, re-based to
// start at offset 0: the window watermarks are tuned on, so that a change
// of habits two months ago does not set this month's thresholds. A job
// that started before the window and still runs in it is kept, submitted at
// the window's start for the time it has left (and without its deadline,
// which belongs to a start the window does not see): long jobs hold
// capacity through the window, and dropping them would make it look
// emptier than it was.
func LastDays(tr trace.Trace, days int) trace.Trace {
	if days <= 0 || len(tr.Jobs) == 0 {
		return tr
	}
	cut := tr.Jobs[len(tr.Jobs)-1].Submit - time.Duration(days)*24*time.Hour
	if cut <= 0 {
		return tr
	}
	out := trace.Trace{Name: tr.Name}
	if !tr.Start.IsZero() {
		out.Start = tr.Start.Add(cut)
	}
	for _, j := range tr.Jobs {
		switch {
		case j.Submit >= cut:
			j.Submit -= cut
		case j.Submit+j.Duration > cut:
			j.Duration = j.Submit + j.Duration - cut
			j.Submit, j.Deadline = 0, 0
		default:
			continue
		}
		out.Jobs = append(out.Jobs, j)
	}
	trace.SortJobs(out.Jobs)
	return out
}
