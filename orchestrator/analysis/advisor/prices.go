package advisor

import "fmt"

// pricesMissing warns when the prices cannot give a break-even. Saying so
// matters more than the advice it blocks: silence would read as "templates
// are where they belong".
func pricesMissing(w Window) (Recommendation, bool) {
	err := w.Prices.Validate()
	if err == nil {
		return Recommendation{}, false
	}
	p := w.Prices
	return Recommendation{
		Kind:     KindPrices,
		Severity: SeverityWarn,
		Title:    "Prices per slot-hour are not set",
		Action: fmt.Sprintf("Set both prices per slot-hour (%v): without them the break-even "+
			"(24 h x fixed / elastic) is unknown, so template advice is skipped and the quota "+
			"is sized from mean busy slots only.", err),
		Evidence: Evidence{Prices: &p},
	}, true
}
