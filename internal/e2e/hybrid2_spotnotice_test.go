package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func (r *hybridRig) hasWorker(id string) bool {
	for _, w := range r.workers() {
		if w.ID == id {
			return true
		}
	}
	return false
}

// TestHybrid2SpotNoticeLosesNoStep: a checkpointing burst job runs on a spot
// worker (a `ballast worker --pool spot` child; the fixed slot is busy and
// on-demand is disabled). `ballast chaos spot-notice` warns it: the worker
// checkpoints the job, requeues it (Preemptions 1) and exits by itself. A
// second spot worker resumes the job right after its checkpoint and it
// succeeds; no step up to the checkpoint is lost or done twice.
func TestHybrid2SpotNoticeLosesNoStep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const steps = 60
	r := newHybridRig(t, hybrid2Pools(1, 2, 0), 0.7, 0.4)
	fixed := r.startFixedWorker("fixed-1", 1)
	r.startController("ctl-1", r.capacity(nil))
	long := r.submitSleep("core-long", jobs.ClassCore, 30)
	testenv.Eventually(t, 10*time.Second, "the core job holding the fixed slot", func() bool {
		j := r.job(long)
		r.mustNotFail(j)
		return j.State == jobs.StateRunning && j.Worker == fixed.ID()
	})

	spot1 := r.startBallast("spot-1", "worker", "--config", r.cfgPath, "--pool", "spot", "--id", "spot-1")
	testenv.Eventually(t, 10*time.Second, "spot-1 registered", func() bool {
		if spot1.exited() {
			t.Fatalf("spot-1 exited:\n%s", spot1.log())
		}
		return r.hasWorker("spot-1")
	})

	id, rec := r.submitSteps("spot-steps", steps)
	testenv.Eventually(t, 10*time.Second, "the job running on spot-1 with a checkpoint", func() bool {
		j := r.job(id)
		r.mustNotFail(j)
		return j.State == jobs.StateRunning && j.Worker == "spot-1" && checkpointStep(j.Checkpoint) >= 5
	})
	cpBefore := checkpointStep(r.job(id).Checkpoint)

	// A spot notice for the fixed worker is refused, naming the problem, and
	// its core job keeps running there.
	out, err := exec.Command(r.bin, "chaos", "spot-notice", "--config", r.cfgPath, "--in", "1s", fixed.ID()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not in a spot pool") {
		t.Fatalf("spot notice to the fixed worker: err %v, output %q", err, out)
	}
	if j := r.job(long); j.State != jobs.StateRunning || j.Worker != fixed.ID() || j.Attempt != 1 {
		t.Fatalf("the core job after a refused notice: %s attempt %d on %s", j.State, j.Attempt, j.Worker)
	}

	noticeAt := time.Now()
	out, err = exec.Command(r.bin, "chaos", "spot-notice", "--config", r.cfgPath, "--in", "5s", "spot-1").CombinedOutput()
	if err != nil {
		t.Fatalf("ballast chaos spot-notice: %v\n%s", err, out)
	}

	// Requeued by the notice, before anything else can take it (no other
	// worker serves burst yet).
	var requeued jobs.Job
	testenv.Eventually(t, 5*time.Second, "the job requeued with one preemption", func() bool {
		j := r.job(id)
		r.mustNotFail(j)
		requeued = j
		return j.State == jobs.StateQueued && j.Preemptions == 1
	})
	t.Logf("spot notice -> job requeued: %s (checkpoint %q, attempt %d, queue %s)",
		time.Since(noticeAt).Round(time.Millisecond), requeued.Checkpoint, requeued.Attempt, requeued.Queue)
	cp := checkpointStep(requeued.Checkpoint)
	if cp < cpBefore {
		t.Errorf("checkpoint at requeue is step %d, below the %d seen before the notice", cp, cpBefore)
	}
	if requeued.Queue != "burst" {
		t.Errorf("requeued to %q, want burst (1 preemption is within the spot budget)", requeued.Queue)
	}

	select {
	case <-spot1.done:
	case <-time.After(5*time.Second + 3*time.Second):
		t.Fatalf("spot-1 did not exit by itself within the notice:\n%s", spot1.log())
	}
	t.Logf("spot notice -> spot-1 process exited: %s", time.Since(noticeAt).Round(time.Millisecond))
	if !strings.Contains(spot1.log(), "reclaimed") {
		t.Errorf("spot-1 did not report the reclaim:\n%s", spot1.log())
	}
	if code := spot1.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("spot-1 exited %d, want 0", code)
	}
	testenv.Eventually(t, 5*time.Second, "spot-1 gone from the registry", func() bool { return !r.hasWorker("spot-1") })

	r.startBallast("spot-2", "worker", "--config", r.cfgPath, "--pool", "spot", "--id", "spot-2")
	var resumed time.Time
	testenv.Eventually(t, 10*time.Second, "the job resumed on spot-2", func() bool {
		j := r.job(id)
		r.mustNotFail(j)
		if j.Worker == "spot-2" && (j.State == jobs.StateRunning || j.State == jobs.StateSucceeded) {
			resumed = time.Now()
			return true
		}
		return false
	})
	t.Logf("spot notice -> job resumed on spot-2: %s", resumed.Sub(noticeAt).Round(time.Millisecond))
	testenv.Eventually(t, 15*time.Second, "the job succeeded", func() bool {
		j := r.job(id)
		r.mustNotFail(j)
		return j.State == jobs.StateSucceeded
	})
	final := r.job(id)
	if final.Worker != "spot-2" || final.Preemptions != 1 {
		t.Errorf("job finished on %q with %d preemptions, want spot-2 and 1", final.Worker, final.Preemptions)
	}

	byAttempt := readRecord(t, rec)
	t.Logf("job %s:%s (checkpoint at requeue: step %d)", id, fmtSteps(byAttempt), cp)
	attempts := checkResumedSteps(t, id, rec, steps)
	if len(attempts) != 2 {
		t.Fatalf("attempts %v, want 2 (spot-1, then spot-2)", attempts)
	}
	if first := byAttempt[attempts[1]][0]; first != cp+1 {
		t.Errorf("attempt %d resumed at step %d, want checkpoint+1 = %d", attempts[1], first, cp+1)
	}
	done := map[int]int{}
	for _, ss := range byAttempt {
		for _, s := range ss {
			done[s]++
		}
	}
	for s := 1; s <= cp; s++ {
		if done[s] != 1 {
			t.Errorf("step %d (up to the checkpoint %d) done %d times, want once", s, cp, done[s])
		}
	}
	if last := byAttempt[attempts[0]]; last[len(last)-1] < cp {
		t.Errorf("spot-1 recorded steps up to %d, below the checkpoint %d", last[len(last)-1], cp)
	}
}
