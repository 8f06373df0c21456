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
