package planner

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/orchestrator/sim"
	"github.com/ballastdev/ballast/orchestrator/trace"
)

// Watermarks is one high/low pair the sweep tries.
type Watermarks struct{ High, Low float64 }

// DefaultWatermarks are the pairs the sweep tries when none are given: the
// design's 70/40 and its neighbours, each keeping a 0.3 gap against flapping.
var DefaultWatermarks = []Watermarks{{0.6, 0.3}, {0.7, 0.4}, {0.8, 0.5}, {0.9, 0.6}}

// SweepOptions configures the simulated sweep.
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
	// Progress, when set, is told after each simulation how many of the
	// sweep's points are done: a month-long trace takes minutes.
	Progress func(done, total int)
	// TryCoreOverflow also tries every point with rule 7 on (core work
	// waiting longer than the policy's CoreMaxWait runs on on-demand
	// capacity): with it a quota below the core peak can meet the target.
	TryCoreOverflow bool
}

// Point is one simulated combination.
type Point struct {
	FixedSlots int        `json:"fixed_slots"`
	Watermarks Watermarks `json:"watermarks"`
	// CoreOverflow is true when rule 7 was on for this point.
	CoreOverflow bool       `json:"core_overflow,omitempty"`
	Result       sim.Result `json:"result"`
	// MeetsTarget is true when both p95 waits are within the target.
	MeetsTarget bool `json:"meets_target"`
}

// quotaSteps is how many quota sizes the default spread tries.
const quotaSteps = 12

// SimulatedSweep runs the trace through the live policy for every quota and
// watermark pair and returns every point and the best: the cheapest that
// meets the wait target, or, if none does, the one with the shortest p95
// wait. Runs are deterministic (sim is), so the answer is too.
func SimulatedSweep(tr trace.Trace, o SweepOptions) (best Point, all []Point, err error) {
	if len(tr.Jobs) == 0 {
		return Point{}, nil, errors.New("planner: the trace has no jobs")
	}
	if o.WaitTarget <= 0 {
		o.WaitTarget = 10 * time.Minute
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
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
	for _, q := range quotas {
		for _, m := range marks {
			for _, ov := range overflow {
				all = append(all, Point{FixedSlots: q, Watermarks: m, CoreOverflow: ov})
			}
		}
	}
	errs := make([]error, len(all))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	finished := 0
	report := func() {
		if o.Progress == nil {
			return
		}
		mu.Lock()
		finished++
		n := finished
		mu.Unlock()
		o.Progress(n, len(all))
	}
	for i := range all {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer report()
			opts := o.Base
			opts.FixedSlots = all[i].FixedSlots
			if opts.Config == (policy.Config{}) {
				opts.Config = policy.DefaultConfig()
			}
			opts.Config.High, opts.Config.Low = all[i].Watermarks.High, all[i].Watermarks.Low
			opts.Config.CoreOverflow = opts.Config.CoreOverflow || all[i].CoreOverflow
			r, err := sim.Run(tr, opts)
			if err != nil {
				errs[i] = fmt.Errorf("quota %d, watermarks %.2f/%.2f: %w", all[i].FixedSlots, all[i].Watermarks.High, all[i].Watermarks.Low, err)
				return
			}
			all[i].Result = r
			all[i].MeetsTarget = r.ElasticWait.P95 <= o.WaitTarget && r.CoreWait.P95 <= o.WaitTarget && r.Unfinished == 0
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Point{}, all, err
	}
	return pickBest(all), all, nil
}

// pickBest prefers points meeting the target, then lower cost, then fewer
// fixed slots (less commitment), then the design's default watermarks.
func pickBest(all []Point) Point {
	return slices.MinFunc(all, func(a, b Point) int {
		if a.MeetsTarget != b.MeetsTarget {
			if a.MeetsTarget {
				return -1
			}
			return 1
		}
		if !a.MeetsTarget { // none meets it: the shortest wait is the least bad
			if c := cmp.Compare(worstWait(a), worstWait(b)); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(a.Result.Cost.Total, b.Result.Cost.Total); c != 0 {
			return c
		}
		if c := cmp.Compare(a.FixedSlots, b.FixedSlots); c != 0 {
			return c
		}
		return cmp.Compare(distance(a.Watermarks), distance(b.Watermarks))
	})
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

// LastDays returns the part of tr submitted in its last days, re-based to
// start at offset 0: the window watermarks are tuned on, so that a change
// of habits two months ago does not set this month's thresholds.
func LastDays(tr trace.Trace, days int) trace.Trace {
	if days <= 0 || len(tr.Jobs) == 0 {
		return tr
	}
	cut := tr.Jobs[len(tr.Jobs)-1].Submit - time.Duration(days)*24*time.Hour
	if cut <= 0 {
		return tr
	}
	i, _ := slices.BinarySearchFunc(tr.Jobs, cut, func(j trace.Job, t time.Duration) int { return cmp.Compare(j.Submit, t) })
	out := trace.Trace{Name: tr.Name, Jobs: make([]trace.Job, len(tr.Jobs)-i)}
	if !tr.Start.IsZero() {
		out.Start = tr.Start.Add(cut)
	}
	for k, j := range tr.Jobs[i:] {
		j.Submit -= cut
		out.Jobs[k] = j
	}
	return out
}
