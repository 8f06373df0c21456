package trace

import (
	"cmp"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// PackedBusyTime is BusyTime with the GPUs that shares need counted as a
// GPU worker can pack them: a share never spans two devices, so two
// shares of more than half a GPU never sit on one. At every instant the
// level is the whole GPUs jobs hold plus ShareGPUs of the shares running
// then, a lower bound on the devices any placement of them uses, and
// never below BusyTime's level (shares summed and rounded up), which
// lets shares split across devices as no worker does. The offline
// optimum prices these levels, so it stays a lower bound while it no
// longer counts 0.6 + 0.6 + 0.6 of a GPU as two devices. O(n log n).
func (t Trace) PackedBusyTime() []time.Duration {
	type change struct {
		at time.Duration
		j  int // index in t.Jobs
		on bool
	}
	cs := make([]change, 0, 2*len(t.Jobs))
	for i, j := range t.Jobs {
		cs = append(cs, change{j.Submit, i, true}, change{j.Submit + j.Duration, i, false})
	}
	slices.SortFunc(cs, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	var (
		busy  []time.Duration
		whole int
		sh    ShareLoad
		last  time.Duration
	)
	for _, c := range cs {
		if c.at > last {
			k := whole + sh.GPUs()
			for len(busy) <= k {
				busy = append(busy, 0)
			}
			busy[k] += c.at - last
			last = c.at
		}
		j := t.Jobs[c.j]
		if j.Share > 0 {
			sh.Add(j.Share, c.on)
		} else if c.on {
			whole += j.TotalSlots()
		} else {
			whole -= j.TotalSlots()
		}
	}
	return busy
}

// ShareLoad is the shares of one GPU running at once, kept as what the
// bound of GPUs needs: how many are over half a GPU and the thousandths
// of the big ones and of the rest.
type ShareLoad struct {
	big      int   // shares over half a GPU
	bigMilli int64 // their thousandths
	small    int64 // thousandths of the shares of half a GPU or less
}

// Add counts a share of milli thousandths in (on) or out.
func (s *ShareLoad) Add(milli int, on bool) {
	sign := int64(1)
	if !on {
		sign = -1
	}
	if 2*milli > jobs.GPUMilli {
		s.big += int(sign)
		s.bigMilli += sign * int64(milli)
		return
	}
	s.small += sign * int64(milli)
}

// GPUs is a lower bound on the devices the shares fill, the bin-packing
// bound of Martello and Toth for one cut (half a GPU): no two shares over
// half a GPU fit one device, so each takes a device of its own, and the
// smaller shares fill what those leave before they need devices of their
// own. It is at least the shares' sum rounded up, and at most the
// devices of any packing: every packing puts each big share alone with
// at most its device's free room of smaller ones.
func (s ShareLoad) GPUs() int {
	sum := jobs.WholeGPUs(s.bigMilli + s.small)
	room := int64(s.big)*jobs.GPUMilli - s.bigMilli
	return max(sum, s.big+jobs.WholeGPUs(max(s.small-room, 0)))
}
