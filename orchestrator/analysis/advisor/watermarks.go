package advisor

import (
	"fmt"
	"math"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// watermarkGap warns when the band between the watermarks is narrower than
// MinWatermarkGap: utilization that wobbles by less than the band cannot
// cross both watermarks, but by more it drains elastic work below Low and
// lends it out again above High, tick after tick.
func (o Options) watermarkGap(w Window) (Recommendation, bool) {
	gap := w.High - w.Low
	if gap >= o.MinWatermarkGap-eps {
		return Recommendation{}, false
	}
	ev := o.watermarkEvidence(w)
	return Recommendation{
		Kind:     KindWatermarkGap,
		Severity: SeverityWarn,
		Title: fmt.Sprintf("Watermarks %s/%s are only %s points apart",
			pct(w.High), pct(w.Low), points(gap)),
		Action: fmt.Sprintf("Widen the band between the watermarks from %s to at least %s "+
			"points, e.g. high %s and low %s: with a band this narrow, work flaps between "+
			"fixed and elastic as utilization wobbles.",
			points(gap), points(o.MinWatermarkGap), pct(ev.SuggestedHigh), pct(ev.SuggestedLow)),
		Evidence:    Evidence{Watermarks: &ev},
		RuleOfThumb: designWatermarks(),
	}, true
}

// watermarkHeadroom warns when High is over MaxHigh: burst work may then
// fill the quota so far that core work arriving finds no free slot and has
// to reclaim one from a lent job, or wait.
func (o Options) watermarkHeadroom(w Window) (Recommendation, bool) {
	if w.High <= o.MaxHigh+eps {
		return Recommendation{}, false
	}
	ev := o.watermarkEvidence(w)
	return Recommendation{
		Kind:     KindWatermarkHeadroom,
		Severity: SeverityWarn,
		Title:    fmt.Sprintf("High watermark %s leaves core work no headroom", pct(w.High)),
		Action: fmt.Sprintf("Lower the high watermark from %s to %s or below (low %s): above "+
			"%s, burst work fills the quota and arriving core work must preempt lent jobs "+
			"or wait.", pct(w.High), pct(ev.SuggestedHigh), pct(ev.SuggestedLow), pct(o.MaxHigh)),
		Evidence:    Evidence{Watermarks: &ev},
		RuleOfThumb: designWatermarks(),
	}, true
}

// watermarkEvidence suggests the nearest pair that clears both checks: High
// capped at MaxHigh, then Low lowered (never raised) to leave the band.
// Lowering Low rather than raising High keeps the point where burst work
// goes elastic where it was; only moving it back to fixed comes later.
func (o Options) watermarkEvidence(w Window) WatermarkEvidence {
	high := min(w.High, o.MaxHigh)
	low := min(w.Low, floor2(high-o.MinWatermarkGap))
	if low < 0 {
		// A high watermark under the band itself: raise it instead.
		low, high = 0, o.MinWatermarkGap
	}
	return WatermarkEvidence{
		High: w.High, Low: w.Low, Gap: w.High - w.Low,
		MinGap: o.MinWatermarkGap, MaxHigh: o.MaxHigh,
		SuggestedHigh: high, SuggestedLow: low,
	}
}

// designWatermarks is the design's pair, the reference the checks are
// read against.
func designWatermarks() string {
	d := policy.DefaultConfig()
	return fmt.Sprintf("The design's watermarks are high %s and low %s: a %s-point band, "+
		"and %s of the quota kept for core.", pct(d.High), pct(d.Low), points(d.High-d.Low), pct(1-d.High))
}

// floor2 rounds a fraction down to whole percent, forgiving float noise,
// so a suggested watermark reads as a setting (0.5, not 0.49999999999999994)
// and never narrows the band it was computed to leave.
func floor2(x float64) float64 { return math.Floor(x*100+eps) / 100 }

func pct(x float64) string    { return fmt.Sprintf("%.0f%%", 100*x) }
func points(x float64) string { return fmt.Sprintf("%.0f", 100*x) }
