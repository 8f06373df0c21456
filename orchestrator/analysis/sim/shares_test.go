package sim

import (
	"math"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Jobs that share a GPU pack onto one slot as a GPU worker packs them: two
// halves run at once on a one-slot quota, a third half waits for one to
// end, and a whole-GPU job waits until the slot is empty, holding up the
// half behind it (the first job that does not fit ends the take).
func TestSharesPackOntoOneSlot(t *testing.T) {
	half := func(at time.Duration) trace.Job {
		return trace.Job{Submit: at, Duration: time.Hour, Slots: 1, Class: jobs.ClassCore, Share: 500}
	}
	whole := trace.Job{Submit: time.Minute, Duration: time.Hour, Slots: 1, Class: jobs.ClassCore}
	o := Options{FixedSlots: 1, FixedPricePerSlotHour: 1, Tick: time.Second,
		Pools: []policy.Pool{{Name: "fixed", Kind: policy.PoolFixed}}}
	for _, c := range []struct {
		name      string
		jobs      []trace.Job
		max       time.Duration
		mean      time.Duration
		slotHours float64
	}{
		// Both halves at once; the third starts as the first two end.
		{"three halves", []trace.Job{half(0), half(0), half(time.Minute)}, 59 * time.Minute, 59 * time.Minute / 3, 1.5},
		// The whole job waits for the slot to empty, the half behind it
		// for the whole job.
		{"a whole job among halves", []trace.Job{half(0), half(0), whole, half(2 * time.Minute)}, 118 * time.Minute,
			(59 + 118) * time.Minute / 4, 2.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := trace.Trace{Jobs: c.jobs}
			r := runWith(t, tr, o, false, false)
			if r.Jobs != len(c.jobs) || r.CoreWait.Max != c.max || r.CoreWait.Mean != c.mean {
				t.Errorf("%d jobs done, waits max %v mean %v; want %d, %v and %v", r.Jobs, r.CoreWait.Max, r.CoreWait.Mean,
					len(c.jobs), c.max, c.mean)
			}
			// Slot-hours count each share at its part of the GPU.
			if math.Abs(r.SlotHours.Fixed-c.slotHours) > 1e-9 {
				t.Errorf("fixed slot-hours %v, want %v", r.SlotHours.Fixed, c.slotHours)
			}
		})
	}
}

// Shares that cannot pack (0.6 and 0.6) each take a slot of their own.
func TestSharesOverAGPUTakeTwoSlots(t *testing.T) {
	j := trace.Job{Duration: time.Hour, Slots: 1, Class: jobs.ClassCore, Share: 600}
	o := Options{FixedSlots: 2, FixedPricePerSlotHour: 1, Tick: time.Second}
	r := runWith(t, trace.Trace{Jobs: []trace.Job{j, j, j}}, o, false, false)
	if r.CoreWait.Max != time.Hour || r.Jobs != 3 {
		t.Errorf("waits max %v over %d jobs; want the third to wait an hour for a slot", r.CoreWait.Max, r.Jobs)
	}
}
