package advisor

import (
	"fmt"
	"time"
)

// elasticWaits warns when, in some stretch of WaitWindow, jobs waited for
// elastic capacity longer than MaxWaitP95 at the 95th percentile.
func (o Options) elasticWaits(w Window) (Recommendation, bool) {
	var in []Wait
	for _, x := range w.ElasticWaits {
		if w.contains(x.At) {
			in = append(in, x)
		}
	}
	worst, ok := worstWindow(in, o.WaitWindow)
	if !ok || worst.P95 <= o.MaxWaitP95 {
		return Recommendation{}, false
	}
	byClass := map[string]int{}
	for _, x := range in {
		if !x.At.Before(worst.From) && x.At.Before(worst.Until) {
			byClass[x.Class]++
		}
	}
	p95 := worst.P95.Round(time.Second)
	return Recommendation{
		Kind:     KindElasticWaits,
		Severity: SeverityWarn,
		Title: fmt.Sprintf("Elastic waits reached a p95 of %v in the %v from %s",
			p95, o.WaitWindow, worst.From.Format(time.RFC3339)),
		Action: fmt.Sprintf("Route more to elastic, raise pool limits, or lower the high "+
			"watermark: %d jobs waited a p95 of %v for elastic capacity between %s and %s, "+
			"over the %v threshold.", worst.Jobs, p95, worst.From.Format(time.RFC3339),
			worst.Until.Format(time.RFC3339), o.MaxWaitP95),
		Evidence: Evidence{Waits: &WaitEvidence{
			From: worst.From, Until: worst.Until, P95: worst.P95, Jobs: worst.Jobs,
			ByClass: byClass, Threshold: o.MaxWaitP95,
		}},
	}, true
}
