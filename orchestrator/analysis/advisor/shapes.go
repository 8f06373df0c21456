package advisor

import (
	"fmt"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// ShapeEvidence is the jobs that the pools' machines cannot hold: too big
// for every elastic machine (only the quota runs them), or requiring labels
// no pool carries (nothing runs them).
type ShapeEvidence struct {
	// Jobs counts the window's jobs of these shapes, finished or not.
	Jobs int `json:"jobs"`
	// Slots is the most slots one member needs on one machine, and
	// LargestElastic the biggest machine any elastic pool offers.
	Slots          int `json:"slots,omitempty"`
	LargestElastic int `json:"largest_elastic_machine"`
	// Floor is the least quota that runs them all, against FixedSlots.
	Floor      int `json:"floor,omitempty"`
	FixedSlots int `json:"fixed_slots"`
	// NeedsOverflow is set when some of the jobs are core and rule 7 is
	// off: an elastic pool runs them only once it is on.
	NeedsOverflow bool `json:"needs_overflow,omitempty"`
	// Requires is the label set no pool carries.
	Requires map[string]string `json:"requires,omitempty"`
	// Fix is the suggested pool replayed over the window's finished jobs.
	Fix *FixEvidence `json:"fix,omitempty"`
}

// FixEvidence is the window's finished jobs simulated on the pools as they
// are and with the suggested pool added, at the quota and watermarks the
// window ran with.
type FixEvidence struct {
	Pool           string       `json:"pool"`
	From           string       `json:"from"`
	SlotsPerWorker int          `json:"slots_per_worker"`
	Jobs           int          `json:"jobs"`
	Before         SimulatedRun `json:"before"`
	After          SimulatedRun `json:"after"`
}

// SimulatedRun is what a replay cost and how long work waited.
type SimulatedRun struct {
	Cost         float64       `json:"cost"`
	CoreWaitP95  time.Duration `json:"core_wait_p95"`
	BurstWaitP95 time.Duration `json:"burst_wait_p95"`
	Unfinished   int           `json:"unfinished"`
}

// shapes warns of jobs no pool can run, and of jobs only the quota can
// run because no elastic machine is big enough: with a quota under the
// floor they wait for ever, above it they keep quota that elastic machines
// of their size would make unneeded. The pool it suggests is simulated
// over the window's finished jobs.
func (o Options) shapes(w Window) []Recommendation {
	var out []Recommendation
	largest := max(w.Shapes.LargestOnDemand, w.Shapes.LargestSpot)
	// One recommendation per label set: a pool of big A100 machines does
	// nothing for big T4 jobs.
	for _, group := range w.Shapes.QuotaOnlyByLabels() {
		out = append(out, o.shapeGroup(w, planner.LabelWords(group[0].Requires), group))
	}
	for _, s := range w.Shapes.Unlabelled() {
		labels := planner.LabelWords(s.Requires)
		out = append(out, Recommendation{Kind: KindShapes, Severity: SeverityWarn,
			Title:    fmt.Sprintf("%d jobs require %s; no pool carries it, so they wait for ever", s.Jobs, labels),
			Action:   fmt.Sprintf("add %s to the labels of a pool whose machines have it, or drop the requirement", labels),
			Evidence: Evidence{Shapes: &ShapeEvidence{Jobs: s.Jobs, LargestElastic: largest, FixedSlots: w.FixedSlots, Requires: s.Requires}}})
	}
	return out
}

// shapeGroup advises on the jobs of one label set (labels, "" for none)
// that only the quota can hold.
func (o Options) shapeGroup(w Window, labels string, big []planner.Shape) Recommendation {
	largest, floor := 0, 0
	for _, p := range w.Pools {
		if p.Kind.Elastic() && jobs.Carries(p.Labels, big[0].Requires) {
			largest = max(largest, max(p.SlotsPerWorker, 1))
		}
	}
	ev := ShapeEvidence{LargestElastic: largest, FixedSlots: w.FixedSlots, Requires: big[0].Requires}
	for _, s := range big {
		ev.Jobs += s.Jobs
		ev.Slots = max(ev.Slots, s.Slots)
		floor = max(floor, s.TotalSlots())
	}
	ev.Floor = floor
	who, pool := "", fmt.Sprintf("an on-demand pool of %d-slot machines", ev.Slots)
	if labels != "" {
		who = " requiring " + labels
		pool += " that carry " + labels
	}
	r := Recommendation{Kind: KindShapes, Severity: SeverityInfo,
		Title:  fmt.Sprintf("%d jobs%s need %d slots on one machine; no elastic pool for them offers more than %d", ev.Jobs, who, ev.Slots, largest),
		Action: fmt.Sprintf("add %s, or keep at least %d fixed (the quota has %d)", pool, ev.Floor, w.FixedSlots)}
	core := slices.ContainsFunc(big, func(s planner.Shape) bool { return s.Class == jobs.ClassCore })
	ev.NeedsOverflow = core && !w.CoreOverflow
	if ev.NeedsOverflow {
		r.Action = fmt.Sprintf("add %s and turn on capacity.core_overflow (core jobs reach on-demand machines only through it), or keep at least %d fixed (the quota has %d)",
			pool, ev.Floor, w.FixedSlots)
	}
	if w.FixedSlots < ev.Floor {
		r.Severity = SeverityWarn
		r.Title += fmt.Sprintf(", and the quota of %d cannot hold them: they wait for ever", w.FixedSlots)
	}
	if fix, ok := simulateFix(w, ev.Slots, big, ev.NeedsOverflow); ok {
		ev.Fix = &fix
		r.Action += fmt.Sprintf(". Replayed over the window's %d finished jobs with pools.%s added: cost %.2f instead of %.2f, p95 waits core %s and burst %s instead of %s and %s",
			fix.Jobs, fix.Pool, fix.After.Cost, fix.Before.Cost, fix.After.CoreWaitP95, fix.After.BurstWaitP95,
			fix.Before.CoreWaitP95, fix.Before.BurstWaitP95)
	}
	r.Evidence.Shapes = &ev
	return r
}

// simulateFix replays the window's finished jobs on its pools with and
// without the suggested pool. False without finished jobs or a pool to copy.
func simulateFix(w Window, size int, big []planner.Shape, overflow bool) (FixEvidence, bool) {
	pool, ok := planner.SuggestedPool(w.Pools, size, big)
	if !ok || len(w.History.Jobs) == 0 {
		return FixEvidence{}, false
	}
	cfg := policy.DefaultConfig()
	if w.High > 0 && w.Low > 0 {
		cfg.High, cfg.Low = w.High, w.Low
	}
	cfg.CoreOverflow = w.CoreOverflow
	if w.CoreMaxWait > 0 {
		cfg.CoreMaxWait = w.CoreMaxWait
	}
	base := sim.Options{Config: cfg, Pools: w.Pools, FixedSlots: w.FixedSlots, FixedPricePerSlotHour: w.Prices.FixedPerSlotHour,
		Tick: sim.DefaultTick, Seed: 1}
	if len(planner.Flavors(w.Pools)) > 0 {
		base.FixedSlotsByPool = w.Quotas // a quota per flavor
	}
	// Labels no pool declares are replayed as every worker's, as plan does.
	history, _ := planner.RelaxUnknownLabels(w.History, w.Pools)
	run := func(o sim.Options) (SimulatedRun, bool) {
		r, err := sim.Run(history, o)
		if err != nil {
			return SimulatedRun{}, false
		}
		return SimulatedRun{Cost: r.Cost.Total, CoreWaitP95: r.CoreWait.P95, BurstWaitP95: r.ElasticWait.P95, Unfinished: r.Unfinished}, true
	}
	before, ok1 := run(base)
	with := base
	with.Pools = append(slices.Clone(w.Pools), pool.Pool)
	with.Config.CoreOverflow = with.Config.CoreOverflow || overflow
	after, ok2 := run(with)
	if !ok1 || !ok2 {
		return FixEvidence{}, false
	}
	return FixEvidence{Pool: pool.Name, From: pool.From, SlotsPerWorker: size, Jobs: len(w.History.Jobs), Before: before, After: after}, true
}
