package trace

import (
	"cmp"
	"slices"
	"time"
)

// BusyTime is the trace's exact demand as a histogram: element k is how
// long exactly k slots are busy if every job starts at its submission and
// runs for its Duration, on [Submit, Submit+Duration). Unlike Demand it is
// not sampled, so a job of seconds counts for its seconds, and a job that
// ends as another starts is not counted twice (no time passes between the
// two). The elements add up to Span; the last one is the peak's. It is
// O(n log n) in the jobs.
func (t Trace) BusyTime() []time.Duration {
	type change struct {
		at    time.Duration
		delta int
	}
	cs := make([]change, 0, 2*len(t.Jobs))
	for _, j := range t.Jobs {
		cs = append(cs, change{j.Submit, j.Slots}, change{j.Submit + j.Duration, -j.Slots})
	}
	slices.SortFunc(cs, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	var busy []time.Duration
	cur := 0
	var last time.Duration
	for _, c := range cs {
		if c.at > last {
			for len(busy) <= cur {
				busy = append(busy, 0)
			}
			busy[cur] += c.at - last
			last = c.at
		}
		cur += c.delta
	}
	return busy
}
