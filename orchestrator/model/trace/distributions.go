package trace

import (
	"math"
	"math/rand/v2"
	"time"
)

// sample draws one run time. It always draws one normal variate, even for
// Sigma 0, so changing Sigma never shifts the random stream of later jobs.
func (d LogNormal) sample(r *rand.Rand) time.Duration {
	x := float64(d.Median) * math.Exp(d.Sigma*r.NormFloat64())
	limit := MaxOffset
	if d.Max > 0 {
		limit = d.Max
	}
	x = min(x, float64(limit)) // also tames +Inf from an extreme draw
	v := time.Duration(math.Round(x/float64(time.Millisecond))) * time.Millisecond
	return max(v, time.Millisecond)
}

// slotPicker draws slot counts from a []SlotWeight.
type slotPicker struct {
	cum   []float64 // running sums of the weights
	slots []int
}

func newSlotPicker(ws []SlotWeight) slotPicker {
	p := slotPicker{cum: make([]float64, len(ws)), slots: make([]int, len(ws))}
	total := 0.0
	for i, w := range ws {
		total += w.Weight
		p.cum[i], p.slots[i] = total, w.Slots
	}
	return p
}

// pick draws a slot count; 1 when there is no distribution. A linear scan
// beats a binary search for the handful of values a distribution has.
func (p slotPicker) pick(r *rand.Rand) int {
	if len(p.slots) == 0 {
		return 1
	}
	u := r.Float64() * p.cum[len(p.cum)-1]
	for i, c := range p.cum {
		if u < c {
			return p.slots[i]
		}
	}
	return p.slots[len(p.slots)-1] // u rounded up to the total
}
