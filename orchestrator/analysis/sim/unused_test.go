package sim

import (
	"math"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// A worker that a job which cannot checkpoint keeps up is billed with
// its free slots until that job ends, and the pool says how much of its
// time that was: on a 4-slot worker, booted at 3 min, a 30-minute
// checkpointable job and a 1-hour one that cannot checkpoint leave 2
// slots free for half an hour, then 3 for another half hour, 2.5
// slot-hours. Rule 5 cannot repack it (one of its jobs cannot move). A
// worker of checkpointable work alone counts nothing.
func TestPinnedSlotHoursCountFreeSlotsHeldByAJobThatCannotMove(t *testing.T) {
	o := Options{Pools: []policy.Pool{quota(1), onDemand(1, 4)}}
	for _, c := range []struct {
		name string
		jobs []trace.Job
		want float64
	}{
		{"pinned", []trace.Job{burstJob(0, time.Hour, false), burstJob(0, 30*time.Minute, true)}, 2.5},
		{"checkpointable", []trace.Job{burstJob(0, time.Hour, true), burstJob(0, 30*time.Minute, true)}, 0},
	} {
		r := runChecked(t, mkTrace(c.jobs...), o)
		od := pool(t, r, "od")
		if r.Jobs != 2 || od.Launched != 1 || r.Preemptions.Count() != 0 {
			t.Fatalf("%s: %d jobs, %d workers launched, %d preemptions: want 2 jobs on one worker, none moved",
				c.name, r.Jobs, od.Launched, r.Preemptions.Count())
		}
		if math.Abs(od.PinnedSlotHours-c.want) > 1e-9 {
			t.Errorf("%s: pinned free slot-hours %.4f, want %.4f", c.name, od.PinnedSlotHours, c.want)
		}
	}
}

// An elastic pool says how much GPU time its shared GPUs left unused. On
// one-GPU workers booted at 3 min: shares of 0.4 for an hour and 0.4 for
// half an hour share one GPU, which leaves 0.2 for half an hour and 0.6
// for the next, 0.4 GPU-hours. Shares of 0.6 cannot pair up: each takes a
// worker and leaves 0.4 of it, for half an hour and an hour, 0.6 GPU-hours.
// Whole-GPU jobs leave nothing.
func TestShareRoomSlotHoursCountWhatSharedGPUsLeaveUnused(t *testing.T) {
	o := Options{Pools: []policy.Pool{quota(1), onDemand(1, 1)}}
	share := func(dur time.Duration, milli int) trace.Job {
		j := burstJob(0, dur, true)
		j.Share = milli
		return j
	}
	for _, c := range []struct {
		name     string
		jobs     []trace.Job
		launched int
		want     float64
	}{
		{"pair", []trace.Job{share(time.Hour, 400), share(30*time.Minute, 400)}, 1, 0.4},
		{"no pair", []trace.Job{share(time.Hour, 600), share(30*time.Minute, 600)}, 2, 0.6},
		{"whole", []trace.Job{burstJob(0, time.Hour, true), burstJob(0, 30*time.Minute, true)}, 2, 0},
	} {
		r := runChecked(t, mkTrace(c.jobs...), o)
		od := pool(t, r, "od")
		if r.Jobs != 2 || od.Launched != c.launched || r.Preemptions.Count() != 0 {
			t.Fatalf("%s: %d jobs, %d workers launched, %d preemptions: want 2 jobs on %d workers, none moved",
				c.name, r.Jobs, od.Launched, r.Preemptions.Count(), c.launched)
		}
		if math.Abs(od.ShareRoomSlotHours-c.want) > 1e-9 {
			t.Errorf("%s: unused shared GPU-hours %.4f, want %.4f", c.name, od.ShareRoomSlotHours, c.want)
		}
	}
}
