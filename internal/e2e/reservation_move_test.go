package e2e

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// TestReservationMovesToAWorkerThatFreed: a 4-slot core job that fits on
// neither of two 4-slot fixed workers is reserved on the closer one,
// fixed-1, whose 2-slot job runs for 45 s. When fixed-2's 3-slot job ends
// after 3 s, the reservation moves there once it is
// policy.ReservationPatience old, and the job starts on fixed-2 while
// fixed-1's job still runs, instead of waiting out the 45 s.
func TestReservationMovesToAWorkerThatFreed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	r := newHybridRigWith(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 8, PricePerSlotHour: 1},
	}, 1.0, 0.4, func(c *config.Config) {
		sized := c.Templates["hy-sleep"]
		sized.MaxSlots = 4
		c.Templates["hy-sized"] = sized
	})
	r.startFixedWorker("fixed-1", 4)
	r.startFixedWorker("fixed-2", 4)
	r.startController("ctl-1", r.capacity(nil))
	submit := func(key string, slots int, seconds float64) string {
		return r.submit(jobs.Submission{Template: "hy-sized", IdempotencyKey: key, Slots: &slots,
			Params: map[string]json.RawMessage{"seconds": json.RawMessage(strconv.FormatFloat(seconds, 'f', -1, 64))}})
	}
	running := func(id, worker string) func() bool {
		return func() bool {
			j := r.job(id)
			r.mustNotFail(j)
			return j.State == jobs.StateRunning && j.Worker == worker
		}
	}
	// Best fit puts the 2-slot job on fixed-1 (ties by ID), and the
	// 3-slot job, which fits there no more, on fixed-2.
	long := submit("long", 2, 45)
	testenv.Eventually(t, 15*time.Second, "the 45 s job running on fixed-1", running(long, "fixed-1"))
	short := submit("short", 3, 3)
	testenv.Eventually(t, 15*time.Second, "the 3 s job running on fixed-2", running(short, "fixed-2"))

	submitted := time.Now()
	big := submit("big", 4, 1)
	var reserved jobs.Job
	testenv.Eventually(t, 10*time.Second, "the 4-slot job reserved on fixed-1", func() bool {
		reserved = r.job(big)
		return reserved.State == jobs.StateQueued && len(reserved.Placed) == 1 && reserved.Placed[0] == "fixed-1"
	})
	var started jobs.Job
	bound := policy.ReservationPatience + 10*time.Second
	testenv.Eventually(t, bound, "the 4-slot job started on fixed-2", func() bool {
		started = r.job(big)
		r.mustNotFail(started)
		return (started.State == jobs.StateRunning || started.State == jobs.StateSucceeded) && started.Worker == "fixed-2"
	})
	wait := started.StartedAt.Sub(submitted)
	if j := r.job(long); j.State != jobs.StateRunning {
		t.Errorf("the 45 s job is %s: the reservation did not move before fixed-1 freed", j.State)
	}
	if started.Attempt != reserved.Attempt+1 {
		t.Errorf("the job started at attempt %d, want %d: one move of its placement", started.Attempt, reserved.Attempt+1)
	}
	t.Logf("4-slot job: reserved on fixed-1, moved to fixed-2 and started %s after submission (patience %s, fixed-1 busy for 45 s)",
		wait.Round(time.Millisecond), policy.ReservationPatience)
}
