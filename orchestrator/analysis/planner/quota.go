package planner

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Prices are what the planner weighs: a fixed slot-hour, paid whether used
// or not, against an elastic slot-hour, paid only when used.
type Prices struct {
	FixedPerSlotHour   float64 `json:"fixed_per_slot_hour"`
	ElasticPerSlotHour float64 `json:"elastic_per_slot_hour"`
}

// Validate says what is wrong with the prices.
func (p Prices) Validate() error {
	switch {
	case p.FixedPerSlotHour <= 0:
		return fmt.Errorf("fixed price per slot-hour must be > 0, got %g", p.FixedPerSlotHour)
	case p.ElasticPerSlotHour <= 0:
		return fmt.Errorf("elastic price per slot-hour must be > 0, got %g", p.ElasticPerSlotHour)
	}
	return nil
}

// Ratio is fixed over elastic price: the share of the time a slot must be
// busy for fixed quota to pay off. With elastic at three times fixed it is
// 1/3, which is where the "over 8 hours a day belongs on fixed" rule of
// thumb comes from (24 h / 3).
func (p Prices) Ratio() float64 { return p.FixedPerSlotHour / p.ElasticPerSlotHour }

// BreakEvenHours is the daily run time above which a slot of work costs
// less on fixed quota: 24 h x fixed / elastic price.
func (p Prices) BreakEvenHours() float64 { return 24 * p.Ratio() }

// DemandStep is the sampling step of demand curves: fine enough for jobs
// of minutes, coarse enough that a month is 43,200 samples.
const DemandStep = time.Minute

// Curve is a demand curve: busy slots sampled every Step if every job
// started at submission (trace.Trace.Demand).
type Curve struct {
	Step    time.Duration `json:"step"`
	Samples []int         `json:"samples"`
}

// DemandCurve samples tr's demand every step.
func DemandCurve(tr trace.Trace, step time.Duration) Curve {
	return Curve{Step: step, Samples: tr.Demand(step)}
}

// Hourly returns the curve averaged per hour, the resolution at which the
// rule of thumb's "minimum demand" is read: a one-minute lull between two
// jobs is not the team's base load.
func (c Curve) Hourly() []float64 {
	per := max(int(time.Hour/c.Step), 1)
	var out []float64
	for i := 0; i < len(c.Samples); i += per {
		end := min(i+per, len(c.Samples))
		sum := 0
		for _, v := range c.Samples[i:end] {
			sum += v
		}
		out = append(out, float64(sum)/float64(end-i))
	}
	return out
}

// Peak is the highest sample.
func (c Curve) Peak() int {
	if len(c.Samples) == 0 {
		return 0
	}
	return slices.Max(c.Samples)
}

// RuleOfThumb is the source's "fixed = minimum demand x 1.2", with the
// minimum read from hourly averages, rounded up to whole slots.
func RuleOfThumb(c Curve) int {
	h := c.Hourly()
	if len(h) == 0 {
		return 0
	}
	return int(math.Ceil(slices.Min(h)*1.2 - 1e-9))
}

// CostOptimal is the quota that minimizes fixed plus elastic cost when
// elastic capacity is always there: the k-th fixed slot costs the fixed
// price every hour and saves the elastic price in the hours demand reaches
// k, so it pays off while demand is at least k for a share of the time of
// at least fixed/elastic price. The answer is the largest such k, the
// (1 - ratio) quantile of demand. When fixed is not cheaper than elastic
// (ratio >= 1) no slot pays off and the answer is 0.
func CostOptimal(c Curve, p Prices) int {
	if len(c.Samples) == 0 || p.Ratio() >= 1 {
		return 0
	}
	sorted := slices.Clone(c.Samples)
	slices.Sort(sorted)
	n := len(sorted)
	// share(k) = fraction of samples with demand >= k, non-increasing in k.
	// Find the largest k with share(k) >= ratio.
	best := 0
	for k := 1; k <= sorted[n-1]; k++ {
		i, _ := slices.BinarySearch(sorted, k) // first sample >= k
		if float64(n-i)/float64(n) < p.Ratio() {
			break
		}
		best = k
	}
	return best
}

// CostOf is the cost of holding quota fixed slots against curve c when
// elastic capacity covers the rest at once: the closed form the simulated
// sweep refines with start-up delays, watermarks, billing and preemptions.
func CostOf(c Curve, quota int, p Prices) (fixed, elastic float64) {
	hours := c.Step.Hours()
	for _, d := range c.Samples {
		fixed += float64(quota) * p.FixedPerSlotHour * hours
		if d > quota {
			elastic += float64(d-quota) * p.ElasticPerSlotHour * hours
		}
	}
	return fixed, elastic
}
