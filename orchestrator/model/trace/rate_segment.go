package trace

import (
	"math/rand/v2"
	"time"
)

// rateSegment is a stretch of time [from, to) over which the arrival rate of
// a Poisson process moves linearly from r0 to r1 arrivals per hour. Both
// random rhythms are sequences of such segments: the pulse's are flat (off
// hours, working hours), the mixed rhythm's ramp is a slope.
type rateSegment struct {
	from, to time.Duration
	r0, r1   float64
}

// expected is the mean number of arrivals: the integral of the rate.
func (s rateSegment) expected() float64 {
	if s.to <= s.from {
		return 0
	}
	return (s.r0 + s.r1) / 2 * (s.to - s.from).Hours()
}

// arrivals draws the arrival times in order. A flat segment is a homogeneous
// process (exponential gaps). A slope uses thinning (Lewis and Shedler):
// candidates at the top rate, each kept with probability rate(t)/top, which
// is exact for any rate function below the top; for a ramp from 30% it
// costs under two candidates per arrival.
//
// Restarting the process at each segment boundary is exact too, because
// exponential gaps are memoryless.
func (s rateSegment) arrivals(r *rand.Rand, emit func(time.Duration)) {
	top := max(s.r0, s.r1)
	if top <= 0 || s.to <= s.from {
		return
	}
	gap := float64(time.Hour) / top // mean gap in nanoseconds
	from, to := float64(s.from), float64(s.to)
	slope := s.r1 != s.r0
	for t := from; ; {
		t += r.ExpFloat64() * gap
		if t >= to {
			return
		}
		if slope {
			rate := s.r0 + (s.r1-s.r0)*(t-from)/(to-from)
			if r.Float64()*top >= rate {
				continue
			}
		}
		emit(time.Duration(t))
	}
}
