package e2e

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TestHybridMigrationBackAndDrain: a checkpointable burst job scales up an
// on-demand worker while core work fills the fixed quota. When the core
// work is done and fixed utilization falls below the low watermark, the
// job is checkpointed and migrated to the fixed worker, where it resumes
// from its checkpoint, and the on-demand worker is drained and released.
func TestHybridMigrationBackAndDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const steps = 60
	r := newHybridRig(t, hybridElasticPools(2), 0.7, 0.4)
	fixed := r.startFixedWorker("fixed-1", 2)
	prov := r.localProvider(map[string]time.Duration{"ondemand": 300 * time.Millisecond})
	r.startController("ctl-1", r.capacity(prov))

	cores := []string{r.submitSleep("core-1", jobs.ClassCore, 4), r.submitSleep("core-2", jobs.ClassCore, 4)}
	testenv.Eventually(t, 10*time.Second, "both core jobs holding the fixed slots", func() bool {
		for _, id := range cores {
			if j := r.job(id); j.State != jobs.StateRunning {
				r.mustNotFail(j)
				return false
			}
		}
		return true
	})

	id, rec := r.submitSteps("burst-steps", steps)
	var elastic string
	testenv.Eventually(t, 10*time.Second, "the burst job running on an on-demand worker with a checkpoint", func() bool {
		j := r.job(id)
		r.mustNotFail(j)
		if j.State != jobs.StateRunning || j.Worker == fixed.ID() || checkpointStep(j.Checkpoint) < 1 {
			return false
		}
		elastic = j.Worker
		return true
	})
	for _, in := range listInstances(t, prov) {
		if in.ID == elastic && in.Pool != "ondemand" {
			t.Fatalf("the burst job runs on %s of pool %s, want ondemand", in.ID, in.Pool)
		}
	}
	if r.job(id).Preemptions != 0 {
		t.Fatalf("the burst job was preempted before the core work finished")
	}

	coreDone := r.waitSucceeded(10*time.Second, "the core jobs done", cores...)

	var resumedOnFixed time.Time
	testenv.Eventually(t, 3*hyGrace+5*time.Second, "the burst job migrated to the fixed worker", func() bool {
		j := r.job(id)
		r.mustNotFail(j)
		if j.Worker == fixed.ID() && (j.State == jobs.StateRunning || j.State == jobs.StateSucceeded) {
			resumedOnFixed = time.Now()
			return true
		}
		return false
	})
	t.Logf("migration (core work done -> burst job running on fixed): %s", resumedOnFixed.Sub(coreDone).Round(time.Millisecond))
	if j := r.job(id); j.Preemptions != 1 {
		t.Errorf("the burst job has %d preemptions after the migration, want 1 (requeues %d)", j.Preemptions, j.Requeues)
	}

	testenv.Eventually(t, 15*time.Second, "the on-demand worker drained and released", func() bool {
		for _, w := range r.workers() {
			if w.ID == elastic {
				return false
			}
		}
		for _, in := range listInstances(t, prov) {
			if in.State != provider.Gone {
				return false
			}
		}
		return true
	})
	t.Logf("elastic release (core work done -> on-demand worker gone): %s", time.Since(coreDone).Round(time.Millisecond))

	testenv.Eventually(t, 15*time.Second, "the burst job succeeded", func() bool {
		j := r.job(id)
		r.mustNotFail(j)
		return j.State == jobs.StateSucceeded
	})
	attempts := checkResumedSteps(t, id, rec, steps)
	t.Logf("job %s:%s", id, fmtSteps(readRecord(t, rec)))
	if len(attempts) < 2 {
		t.Errorf("the burst job ran attempts %v, want a resumed attempt on fixed", attempts)
	}
	if j := r.job(id); j.Worker != fixed.ID() {
		t.Errorf("the burst job finished on %q, want the fixed worker", j.Worker)
	}
	if n := len(listInstances(t, prov)); n != 1 {
		t.Errorf("%d on-demand instances launched for one burst job, want 1", n)
	}
}
