package advisor

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// eps absorbs float noise in threshold comparisons, so that a figure
// equal to its threshold on paper (8 h against 24 x 1/3) is not over it.
const eps = 1e-9

// fixedIdle advises shrinking a quota whose mean idle share is over
// MaxIdle, to the number of slots that were busy often enough to pay.
func (o Options) fixedIdle(w Window) (Recommendation, bool) {
	if w.FixedSlots <= 0 {
		return Recommendation{}, false
	}
	s, ok := idleSeriesOf(w)
	if !ok || s.covered < o.MinIdleCovered {
		return Recommendation{}, false
	}
	mean := s.mean()
	if mean <= o.MaxIdle+eps {
		return Recommendation{}, false
	}
	busy := float64(w.FixedSlots) * (1 - mean)
	ev := IdleEvidence{
		MeanIdle: mean, Threshold: o.MaxIdle, Samples: len(s.values), Covered: s.covered,
		FixedSlots: w.FixedSlots, MeanBusySlots: busy, MeanBusyQuota: ceil(busy),
		MinDemand: w.MinDemand, RuleOfThumbQuota: ceil(w.MinDemand * 1.2),
	}
	ev.Suggested = ev.MeanBusyQuota
	why := fmt.Sprintf("%d slots is its mean busy load, %d x (1 - %.2f) rounded up; set "+
		"the prices to size it by the break-even instead", ev.Suggested, w.FixedSlots, mean)
	if w.Prices.Validate() == nil {
		ev.BreakEvenShare = w.Prices.Ratio()
		ev.BreakEvenQuota = s.breakEvenQuota(w.FixedSlots, ev.BreakEvenShare)
		ev.Suggested = ev.BreakEvenQuota
		why = fmt.Sprintf("only %d slots were busy at least %.0f%% of the time, the "+
			"break-even share (fixed / elastic price), so the others cost more than elastic "+
			"would have", ev.Suggested, 100*ev.BreakEvenShare)
	}
	r := Recommendation{
		Kind:     KindFixedIdle,
		Severity: SeverityInfo,
		Evidence: Evidence{Idle: &ev},
		RuleOfThumb: fmt.Sprintf("Source's rule of thumb, fixed = minimum demand x 1.2: "+
			"%.1f x 1.2 = %d slots. Mean busy slots rounded up: %d.",
			w.MinDemand, ev.RuleOfThumbQuota, ev.MeanBusyQuota),
	}
	if ev.Suggested >= w.FixedSlots && ev.BreakEvenShare == 0 {
		// A quota of a slot or two, idle on average, still rounds up to
		// itself; without prices there is nothing more to say about it.
		return Recommendation{}, false
	}
	if ev.Suggested >= w.FixedSlots {
		// Idle on average, but in long busy spells: every slot still
		// beats paying elastic rates for the work it does, so the
		// naive cut would cost money. Said so that nobody makes it.
		r.Title = fmt.Sprintf("Fixed quota %.0f%% idle, but every slot pays for itself", 100*mean)
		r.Action = fmt.Sprintf("Keep the fixed quota at %d slots: though %.0f%% idle on "+
			"average (over %.0f%%), each slot was busy at least %.0f%% of the time, the "+
			"break-even share, so shrinking it would cost more in elastic than it saves.",
			w.FixedSlots, 100*mean, 100*o.MaxIdle, 100*ev.BreakEvenShare)
		return r, true
	}
	r.Title = fmt.Sprintf("Fixed quota %.0f%% idle on average", 100*mean)
	r.Action = fmt.Sprintf("Shrink the fixed quota from %d to %d slots: it sat %.0f%% idle "+
		"on average (over %.0f%%); %s.",
		w.FixedSlots, ev.Suggested, 100*mean, 100*o.MaxIdle, why)
	return r, true
}

// idleSeries is the window's idle readings in time order, each weighted by
// how long it stood: until the next reading, the last until the window's
// end. Weighting by time keeps a sampler that paused, or sampled faster
// for a while, from tilting the mean.
type idleSeries struct {
	values, weights []float64
	// covered is the time the readings span: zero when all of them fall
	// at the window's end and count alike.
	covered time.Duration
}

func idleSeriesOf(w Window) (idleSeries, bool) {
	var in []Sample
	for _, x := range w.FixedIdle {
		if w.contains(x.At) {
			in = append(in, x)
		}
	}
	if len(in) == 0 {
		return idleSeries{}, false
	}
	// Ordering equal times by value too keeps the weights independent of
	// the input order: of two readings at one instant, the later in the
	// slice would otherwise get all the time.
	slices.SortFunc(in, func(a, b Sample) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Value, b.Value))
	})
	var s idleSeries
	for i, x := range in {
		end := w.Until
		if i+1 < len(in) {
			end = in[i+1].At
		}
		s.values = append(s.values, min(max(x.Value, 0), 1))
		s.weights = append(s.weights, end.Sub(x.At).Hours())
		s.covered += end.Sub(x.At)
	}
	if s.covered <= 0 {
		// All readings at the window's end: nothing to weigh by, so
		// each counts the same.
		for i := range s.weights {
			s.weights[i] = 1
		}
	}
	return s, true
}

func (s idleSeries) total() float64 {
	t := 0.0
	for _, wt := range s.weights {
		t += wt
	}
	return t
}

func (s idleSeries) mean() float64 {
	sum := 0.0
	for i, v := range s.values {
		sum += v * s.weights[i]
	}
	return sum / s.total()
}

// breakEvenQuota is the largest k such that slot k of the quota was busy
// at least share of the time; slots fill in order, so with b slots busy
// slot k is busy for min(max(b-k+1, 0), 1) of a reading. Below k a fixed
// slot earns more than it costs against elastic rates, above it less:
// planner.CostOptimal's reasoning, read from the quota's own utilization.
func (s idleSeries) breakEvenQuota(slots int, share float64) int {
	if share >= 1 {
		return 0 // fixed is not cheaper, so no slot pays
	}
	total := s.total()
	best := 0
	for k := 1; k <= slots; k++ {
		on := 0.0
		for i, v := range s.values {
			b := float64(slots) * (1 - v)
			on += min(max(b-float64(k-1), 0), 1) * s.weights[i]
		}
		if on/total < share-eps {
			break
		}
		best = k
	}
	return best
}

// ceil rounds a slot count up, forgiving float noise (6.0000000001 is 6).
func ceil(x float64) int { return int(math.Ceil(x - eps)) }
