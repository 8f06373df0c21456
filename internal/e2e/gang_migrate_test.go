package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TestGangMigratesBackToQuota: a checkpointable burst gang of two one-slot
// members runs on two on-demand workers while core work fills the fixed
// quota. Once the core work is done and fixed utilization falls below the
// low watermark, the gang moves back as one: both members stop, and the
// next attempt starts both on the fixed worker, together, from the gang's
// checkpoint, with no completed step lost.
func TestGangMigratesBackToQuota(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const steps = 80
	r := newHybridRigWith(t, hybridElasticPools(4), 0.7, 0.4, func(c *config.Config) {
		g := gangSteps(ballastBinary(t))
		g.Class = jobs.ClassBurst
		g.Size = jobs.Size{Slots: 1, Replicas: 2}
		c.Templates["gang-burst"] = g
	})
	fixed := r.startFixedWorker("fixed-1", 4)
	prov := r.localProvider(map[string]time.Duration{"ondemand": 300 * time.Millisecond})
	r.startController("ctl-1", r.capacity(prov))

	var cores []string
	for i := range 4 {
		cores = append(cores, r.submitSleep("core-"+strconv.Itoa(i), jobs.ClassCore, 5))
	}
	testenv.Eventually(t, 15*time.Second, "the core jobs holding every fixed slot", func() bool {
		for _, id := range cores {
			if j := r.job(id); j.State != jobs.StateRunning {
				r.mustNotFail(j)
				return false
			}
		}
		return true
	})

	record := filepath.Join(r.dir, "gang")
	rec, _ := json.Marshal(record)
	var id string
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(record + ".events")
			t.Logf("events:\n%s", b)
			t.Logf("record: %+v", r.job(id))
		}
	})
	id = r.submit(jobs.Submission{Template: "gang-burst", IdempotencyKey: "gang",
		Params: map[string]json.RawMessage{"steps": json.RawMessage(strconv.Itoa(steps)), "record": rec}})
	var first jobs.Job
	testenv.Eventually(t, 20*time.Second, "the gang running on on-demand workers with a checkpoint", func() bool {
		first = r.job(id)
		r.mustNotFail(first)
		return first.State == jobs.StateRunning && first.Worker != fixed.ID() && checkpointStep(first.Checkpoint) >= 1 &&
			len(startsOf(readGangEvents(t, record+".events"), first.Attempt)) == 2
	})
	checkGangStart(t, startsOf(readGangEvents(t, record+".events"), first.Attempt))
	if len(first.Placed) != 2 || first.Placed[0] == first.Placed[1] {
		t.Fatalf("the gang is placed on %v, want two on-demand workers", first.Placed)
	}
	if first.Preemptions != 0 {
		t.Fatalf("the gang was preempted before the core work finished")
	}

	coreDone := r.waitSucceeded(15*time.Second, "the core jobs done", cores...)

	var moved jobs.Job
	testenv.Eventually(t, 3*hyGrace+10*time.Second, "the gang running on the fixed worker", func() bool {
		moved = r.job(id)
		r.mustNotFail(moved)
		return moved.Attempt > first.Attempt && moved.Worker == fixed.ID() &&
			(moved.State == jobs.StateRunning || moved.State == jobs.StateSucceeded)
	})
	t.Logf("migration (core work done -> gang running on fixed): %s", time.Since(coreDone).Round(time.Millisecond))
	for _, w := range moved.Placed {
		if w != fixed.ID() {
			t.Errorf("the migrated gang is placed on %v, want both members on %s", moved.Placed, fixed.ID())
		}
	}

	var done jobs.Job
	testenv.Eventually(t, 30*time.Second, "the gang succeeded", func() bool {
		done = r.job(id)
		r.mustNotFail(done)
		return done.State == jobs.StateSucceeded
	})
	evs := readGangEvents(t, record+".events")
	// Both members of the first attempt ended before any of the next
	// started: the gang moved as one.
	var lastEnd time.Time
	for _, e := range evs {
		if e.kind == "end" && e.attempt == first.Attempt && e.at.After(lastEnd) {
			lastEnd = e.at
		}
	}
	next := startsOf(evs, done.Attempt)
	if len(next) != 2 {
		t.Fatalf("the last attempt %d started members %v, want both", done.Attempt, next)
	}
	checkGangStart(t, next)
	for m, s := range next {
		if !s.at.After(lastEnd) {
			t.Errorf("member %d of attempt %d started at %s, before the first attempt's last member ended at %s", m, done.Attempt, s.at, lastEnd)
		}
	}
	if next[0].resume != next[1].resume || checkpointStep(next[0].resume) < 1 {
		t.Errorf("the members resumed from %q and %q, want the gang's checkpoint", next[0].resume, next[1].resume)
	}
	checkResumedSteps(t, id+" member 0", record+".0", steps)
	if done.Preemptions != 1 || done.Retries != 0 {
		t.Errorf("preemptions %d retries %d, want the migration counted as one preemption", done.Preemptions, done.Retries)
	}
}
