package trace

import (
	"cmp"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// BusyTime is the trace's exact demand as a histogram: element k is how
// long exactly k slots are busy if every job starts at its submission and
// runs for its Duration, on [Submit, Submit+Duration). Unlike Demand it is
// not sampled, so a job of seconds counts for its seconds, and a job that
// ends as another starts is not counted twice (no time passes between the
// two). The elements add up to Span; the last one is the peak's. Jobs
// that share a GPU count at their share, and the slots in use are the
// shares rounded up to whole GPUs: the GPUs they need at the least,
// packed. It is O(n log n) in the jobs.
func (t Trace) BusyTime() []time.Duration {
	type change struct {
		at    time.Duration
		delta int
	}
	cs := make([]change, 0, 2*len(t.Jobs))
	for _, j := range t.Jobs {
		m := j.milli()
		cs = append(cs, change{j.Submit, m}, change{j.Submit + j.Duration, -m})
	}
	slices.SortFunc(cs, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	var busy []time.Duration
	cur := 0
	var last time.Duration
	for _, c := range cs {
		if c.at > last {
			k := jobs.WholeGPUs(int64(cur))
			for len(busy) <= k {
				busy = append(busy, 0)
			}
			busy[k] += c.at - last
			last = c.at
		}
		cur += c.delta
	}
	return busy
}

// milli is what the job uses in thousandths of a slot: its share, or every
// member's slots.
func (j Job) milli() int { return jobs.MilliUsed(j.TotalSlots(), j.Share) }
