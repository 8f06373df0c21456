package e2e

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestHybridLendingAndReclaim: two checkpointable burst jobs are lent to an
// idle fixed worker; a core job then reclaims one slot. The victim is
// checkpointed back to burst, the core job starts on the fixed worker, and
// once the core job is done the victim is lent again and finishes from its
// checkpoint without losing or redoing a checkpointed step.
func TestHybridLendingAndReclaim(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const steps = 60
	// High 1.0 so that both burst jobs can be lent to the two fixed slots.
	r := newHybridRig(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 2, PricePerSlotHour: 1},
	}, 1.0, 0.4)
	fixed := r.startFixedWorker("fixed-1", 2)
	r.startController("ctl-1", r.capacity(nil))

	a, recA := r.submitSteps("burst-a", steps)
	b, recB := r.submitSteps("burst-b", steps)
	burst := map[string]string{a: recA, b: recB}

	testenv.Eventually(t, 15*time.Second, "both burst jobs lent and running on the fixed worker with a checkpoint", func() bool {
		for id := range burst {
			j := r.job(id)
			r.mustNotFail(j)
			if j.State != jobs.StateRunning || j.Worker != fixed.ID() || j.Queue != string(queues.QueueLoan) || checkpointStep(j.Checkpoint) < 2 {
				return false
			}
		}
		return true
	})

	coreAt := time.Now()
	core := r.submitSleep("core-1", jobs.ClassCore, 1)
	var coreRunning time.Time
	testenv.Eventually(t, time.Second+hyGrace+2*time.Second, "the core job running on the fixed worker", func() bool {
		j := r.job(core)
		r.mustNotFail(j)
		if j.State == jobs.StateRunning || j.State == jobs.StateSucceeded {
			if j.Worker != fixed.ID() {
				t.Fatalf("core job ran on %q, want the fixed worker %q", j.Worker, fixed.ID())
			}
			coreRunning = time.Now()
			return true
		}
		return false
	})
	t.Logf("reclaim latency (core submit -> core running): %s (tick %s)", coreRunning.Sub(coreAt).Round(time.Millisecond), hyTick)

	// Exactly one burst job was reclaimed: queued again in burst, one
	// preemption, a checkpoint to resume from.
	var victim string
	var victimCP int
	for id := range burst {
		j := r.job(id)
		if j.Preemptions == 0 {
			continue
		}
		if victim != "" {
			t.Fatalf("both burst jobs were preempted for one core job")
		}
		victim = id
		if j.Preemptions != 1 {
			t.Errorf("victim %s: %d preemptions, want 1", id, j.Preemptions)
		}
		if j.Attempt < 2 {
			t.Errorf("victim %s: attempt %d after the reclaim, want >= 2", id, j.Attempt)
		}
		victimCP = checkpointStep(j.Checkpoint)
		if victimCP < 2 {
			t.Errorf("victim %s: checkpoint %q after the reclaim, want step >= 2", id, j.Checkpoint)
		}
		// While the core job runs both fixed slots are taken: the victim
		// waits in burst (there is no elastic capacity to run it).
		if j.State == jobs.StateQueued && j.Queue != string(queues.QueueBurst) {
			t.Errorf("victim %s: queued in %s after the reclaim, want burst", id, j.Queue)
		}
		t.Logf("victim %s: attempt %d, state %s in %s, checkpoint %q", id, j.Attempt, j.State, j.Queue, j.Checkpoint)
	}
	if victim == "" {
		t.Fatalf("no burst job was preempted for the core job")
	}

	testenv.Eventually(t, 30*time.Second, "every job succeeded", func() bool {
		for _, id := range []string{a, b, core} {
			j := r.job(id)
			r.mustNotFail(j)
			if j.State != jobs.StateSucceeded {
				return false
			}
		}
		return true
	})

	for id, rec := range burst {
		attempts := checkResumedSteps(t, id, rec, steps)
		byAttempt := readRecord(t, rec)
		t.Logf("job %s:%s", id, fmtSteps(byAttempt))
		if id != victim {
			if len(attempts) != 1 {
				t.Errorf("job %s was not reclaimed but ran attempts %v", id, attempts)
			}
			continue
		}
		if len(attempts) < 2 {
			t.Errorf("victim %s ran attempts %v, want a resumed attempt", id, attempts)
			continue
		}
		// The resumed attempt starts right after the checkpoint recorded
		// at the reclaim: nothing checkpointed is done twice.
		if got := byAttempt[attempts[1]][0]; got != victimCP+1 {
			t.Errorf("victim %s: resumed at step %d, want checkpoint %d + 1", id, got, victimCP)
		}
		if j := r.job(id); j.Worker != fixed.ID() {
			t.Errorf("victim %s finished on %q, want the fixed worker", id, j.Worker)
		}
	}
}
