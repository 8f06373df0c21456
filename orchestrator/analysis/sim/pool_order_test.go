package sim

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Two on-demand pools at one price per slot-hour, of 8-slot and 1-slot
// machines: one-slot work launches the small machines, and only the job
// too wide for them an 8-slot one, as the live policy orders pools
// (policy.ComparePools). "big" sorts first by name, which used to decide,
// and then all of it ran on 8-slot machines that were billed whole.
func TestOneSlotWorkOnSmallMachinesAtOnePrice(t *testing.T) {
	big, small := onDemand(2, 8), onDemand(2, 1)
	big.Name, small.Name = "big", "small"
	var js []trace.Job
	for range 6 {
		js = append(js, burstJob(0, time.Hour, false))
	}
	wide := burstJob(10*time.Minute, time.Hour, false)
	wide.Slots = 4
	js = append(js, wide)
	r := runChecked(t, mkTrace(js...), Options{Pools: []policy.Pool{quota(1), big, small}, FixedSlots: 0})

	b, s := pool(t, r, "big"), pool(t, r, "small")
	if r.Jobs != 7 || s.Launched != 6 || b.Launched != 1 {
		t.Fatalf("%d jobs; launched %d small, %d big: want 7 jobs, 6 small and 1 big", r.Jobs, s.Launched, b.Launched)
	}
	if !near(s.SlotHours, 6, 1e-9) || !near(b.SlotHours, 4, 1e-9) {
		t.Errorf("slot-hours small %.3f, big %.3f: want 6 and 4", s.SlotHours, b.SlotHours)
	}
}

// With the 1-slot machines a little dearer a slot, three one-slot jobs
// still rent them, not an 8-slot machine billed whole for three; eight
// jobs at once rent the 8-slot one.
func TestFewJobsRentSmallMachinesALittleDearer(t *testing.T) {
	big, small := onDemand(2.5, 8), onDemand(2.6, 1)
	big.Name, small.Name = "big", "small"
	for _, c := range []struct{ jobs, small, big int }{{3, 3, 0}, {8, 0, 1}} {
		var js []trace.Job
		for range c.jobs {
			js = append(js, burstJob(0, time.Hour, false))
		}
		r := runChecked(t, mkTrace(js...), Options{Pools: []policy.Pool{quota(1), big, small}, FixedSlots: 0})
		if b, s := pool(t, r, "big"), pool(t, r, "small"); s.Launched != c.small || b.Launched != c.big {
			t.Errorf("%d jobs: launched %d small, %d big; want %d and %d", c.jobs, s.Launched, b.Launched, c.small, c.big)
		}
	}
}
