package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// filesTemplate is a checkpointable job whose state is in files of its
// checkpoint directory, not in its token: each step is appended to a
// record file as "ATTEMPT STEP", then written to a directory of its own
// (state and some weights), then reported as checkpoint "step=N"; the
// directories of older steps are removed. As the README asks, files of a
// reported checkpoint are not changed afterwards: the upload runs beside
// the job. A resumed attempt reads its step from the directory
// BALLAST_RESUME_FROM names; a missing or different one is written to
// RECORD.broken and fails the attempt.
func filesTemplate() jobs.Template {
	return jobs.Template{
		// No leading newline: yaml.v3 writes such a block scalar back in a
		// form it cannot read.
		Command: []string{"sh", "-c", `rec="$1"; steps="$2"; dir="$BALLAST_CHECKPOINT_DIR"; s=0
if [ -n "$BALLAST_RESUME_FROM" ]; then
  want=$(echo "$BALLAST_RESUME_FROM" | cut -d= -f2)
  s=$(cat "$dir/step-$want/state" 2>/dev/null)
  if [ "$s" != "$want" ]; then
    echo "attempt $BALLAST_ATTEMPT: state file [$s], resume point [$BALLAST_RESUME_FROM]: $(ls "$dir")" >> "$rec.broken"; exit 9
  fi
fi
trap 'exit 0' TERM
while [ "$s" -lt "$steps" ]; do
  s=$((s+1))
  echo "$BALLAST_ATTEMPT $s" >> "$rec"
  sleep 0.1
  mkdir -p "$dir/step-$s"
  head -c 200000 /dev/urandom > "$dir/step-$s/weights"
  echo "$s" > "$dir/step-$s/state"
  echo "{\"checkpoint\":\"step=$s\"}"
  rm -rf "$dir/step-$((s-3))"
done`, "sh", "${record}", "${steps}"},
		Class: jobs.ClassBurst, Checkpointable: true, Retryable: true, Grace: jobs.Duration(hyGrace),
		Params: map[string]jobs.ParamSpec{
			"steps":  {Type: jobs.ParamInt, Required: true},
			"record": {Type: jobs.ParamString, Required: true},
		},
	}
}

// TestCheckpointStoreSpotNoticeResumesOnDemandFromFiles: a spot worker's
// job keeps its state in files; a spot notice reclaims the worker, and the
// job resumes on an on-demand worker (another `ballast worker` process,
// with a checkpoint directory of its own that starts empty) from the files
// the checkpoint store carried over, and finishes with no step up to the
// checkpoint done twice or skipped.
func TestCheckpointStoreSpotNoticeResumesOnDemandFromFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const steps = 40
	storeURL := testenv.S3(t, nil)
	r := newHybridRigWith(t, hybrid2Pools(1, 1, 1), 0.7, 0.4, func(c *config.Config) {
		c.Checkpoints = config.CheckpointsConfig{Store: storeURL}
		c.Templates["hy-files"] = filesTemplate()
	})
	// The on-demand worker's config differs in its checkpoint directory
	// only: the two processes share nothing but Redis, NATS and the store.
	odCfg := r.cfg
	odCfg.Worker.CheckpointDir = filepath.Join(r.dir, "od-checkpoints")
	data, err := yaml.Marshal(odCfg)
	if err != nil {
		t.Fatal(err)
	}
	odPath := filepath.Join(r.dir, "ondemand.yaml")
	if err := os.WriteFile(odPath, data, 0o600); err != nil {
		t.Fatal(err)
	}

	fixed := r.startFixedWorker("fixed-1", 1)
	r.startController("ctl-1", r.capacity(nil))
	long := r.submitSleep("core-long", jobs.ClassCore, 60)
	testenv.Eventually(t, 10*time.Second, "the core job holding the fixed slot", func() bool {
		j := r.job(long)
		r.mustNotFail(j)
		return j.State == jobs.StateRunning && j.Worker == fixed.ID()
	})
	spot := r.startBallast("spot-1", "worker", "--config", r.cfgPath, "--pool", "spot", "--id", "spot-1")
	testenv.Eventually(t, 10*time.Second, "spot-1 registered", func() bool {
		if spot.exited() {
			t.Fatalf("spot-1 exited:\n%s", spot.log())
		}
		return r.hasWorker("spot-1")
	})
	// The worker says so after it registers: wait for the line.
	testenv.Eventually(t, 5*time.Second, "spot-1 saying where checkpoints go", func() bool {
		return strings.Contains(spot.log(), "checkpoints travel through s3://")
	})
	record := filepath.Join(r.dir, "files.record")
	rec, _ := json.Marshal(record)
	id := r.submit(jobs.Submission{Template: "hy-files", IdempotencyKey: "files",
		Params: map[string]json.RawMessage{"steps": json.RawMessage(strconv.Itoa(steps)), "record": rec}})
	testenv.Eventually(t, 10*time.Second, "the job checkpointing on spot-1", func() bool {
		j := r.job(id)
		r.mustNotFail(j)
		return j.State == jobs.StateRunning && j.Worker == "spot-1" && checkpointStep(j.Checkpoint) >= 5
	})

	noticeAt := time.Now()
	if out, err := exec.Command(r.bin, "chaos", "spot-notice", "--config", r.cfgPath, "--in", "5s", "spot-1").CombinedOutput(); err != nil {
		t.Fatalf("ballast chaos spot-notice: %v\n%s", err, out)
	}
	var requeued jobs.Job
	testenv.Eventually(t, 8*time.Second, "the job requeued by the notice", func() bool {
		requeued = r.job(id)
		r.mustNotFail(requeued)
		return requeued.State == jobs.StateQueued && requeued.Preemptions == 1
	})
	cp := checkpointStep(requeued.Checkpoint)
	t.Logf("spot notice -> requeued from %q in %s", requeued.Checkpoint, time.Since(noticeAt).Round(time.Millisecond))
	select {
	case <-spot.done:
	case <-time.After(8 * time.Second):
		t.Fatalf("spot-1 did not exit within the notice:\n%s", spot.log())
	}

	r.startBallast("ondemand-1", "worker", "--config", odPath, "--pool", "ondemand", "--id", "ondemand-1")
	testenv.Eventually(t, 20*time.Second, "the job to succeed on ondemand-1", func() bool {
		j := r.job(id)
		r.mustNotFail(j)
		return j.State == jobs.StateSucceeded
	})
	final := r.job(id)
	if final.Worker != "ondemand-1" {
		t.Errorf("finished on %q, want ondemand-1", final.Worker)
	}
	if b, err := os.ReadFile(record + ".broken"); err == nil {
		t.Fatalf("a resumed attempt did not find its files:\n%s", b)
	}
	byAttempt := readRecord(t, record)
	t.Logf("job %s:%s (checkpoint at requeue: step %d)", id, fmtSteps(byAttempt), cp)
	attempts := checkResumedSteps(t, id, record, steps)
	if len(attempts) != 2 {
		t.Fatalf("attempts %v, want 2 (spot-1, then ondemand-1)", attempts)
	}
	if first := byAttempt[attempts[1]][0]; first != cp+1 {
		t.Errorf("the on-demand attempt started at step %d, want checkpoint+1 = %d", first, cp+1)
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
}
