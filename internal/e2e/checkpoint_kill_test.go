package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// killTemplate is a checkpointable job whose first attempt writes, step
// after step, a directory of three 1 MiB files whose first line names the
// step, a state file, and SUMS, the sha256 of each (the job's own list, so
// that a later attempt can check what it got); then it appends the step to
// RECORD.reported and reports checkpoint "step=N". It never ends by
// itself: the test kills its worker. A later attempt only checks the
// directory BALLAST_RESUME_FROM names against that step's SUMS and appends
// one line to RECORD.result: "ATTEMPT VERDICT STEP", VERDICT being ok,
// fresh (no resume point), missing (no SUMS for the step) or mismatch.
func killTemplate() jobs.Template {
	return jobs.Template{
		Command: []string{"sh", "-c", `rec="$1"; pause="$2"; dir="$BALLAST_CHECKPOINT_DIR"
if [ "$BALLAST_ATTEMPT" -gt 1 ]; then
  if [ -z "$BALLAST_RESUME_FROM" ]; then echo "$BALLAST_ATTEMPT fresh 0" >> "$rec.result"; exit 0; fi
  want=$(echo "$BALLAST_RESUME_FROM" | cut -d= -f2); d="$dir/step-$want"
  if [ ! -f "$d/SUMS" ]; then echo "$BALLAST_ATTEMPT missing $want" >> "$rec.result"; exit 0; fi
  v=ok
  (cd "$d" && sha256sum -c --quiet --strict SUMS >/dev/null 2>&1) || v=mismatch
  [ "$(wc -l < "$d/SUMS")" -eq 4 ] || v=mismatch
  [ "$(cat "$d/state")" = "$want" ] || v=mismatch
  for i in 0 1 2; do [ "$(head -n 1 "$d/part-$i")" = "step $want part $i" ] || v=mismatch; done
  echo "$BALLAST_ATTEMPT $v $want" >> "$rec.result"; exit 0
fi
s=0
while [ "$s" -lt 100000 ]; do
  s=$((s+1)); d="$dir/step-$s"; mkdir -p "$d"
  for i in 0 1 2; do { echo "step $s part $i"; head -c 1048576 /dev/urandom; } > "$d/part-$i"; done
  echo "$s" > "$d/state"
  (cd "$d" && sha256sum part-0 part-1 part-2 state > SUMS)
  echo "$s" >> "$rec.reported"
  echo "{\"checkpoint\":\"step=$s\"}"
  sleep "$pause"
  rm -rf "$dir/step-$((s-3))"
done`, "sh", "${record}", "${pause}"},
		Class: jobs.ClassBurst, Checkpointable: true, Retryable: true, Grace: jobs.Duration(hyGrace),
		Params: map[string]jobs.ParamSpec{
			"record": {Type: jobs.ParamString, Required: true},
			"pause":  {Type: jobs.ParamFloat, Default: 0.2},
		},
	}
}

// killTally counts what the next attempts restored, over all trials.
type killTally struct {
	newest, previous, fresh, fallback int
	mismatches, missing               int
}

// TestCheckpointStoreWorkerSIGKILLTrials: a `ballast worker` process runs a
// job that reports a checkpoint of a few MiB every few hundred
// milliseconds, and is SIGKILLed at a random moment: after a random delay,
// right after the job reports (the upload just started), or right after a
// commit lands (the next manifest and commit close behind). Another worker
// process, with a checkpoint directory of its own, takes the requeued job
// over; the job's next attempt checks the restored directory against its
// resume point. Every trial must restore the newest committed checkpoint
// or the one before it (none when nothing was committed), with every file
// of that step present and matching its sha256. BALLAST_CKPT_KILL_TRIALS
// sets the number of trials (3 by default).
func TestCheckpointStoreWorkerSIGKILLTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	trials := 3
	if v := os.Getenv("BALLAST_CKPT_KILL_TRIALS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("BALLAST_CKPT_KILL_TRIALS=%q, want a positive number", v)
		}
		trials = n
	}
	storeURL := testenv.S3(t, nil)
	r := newHybridRigWith(t, hybrid2Pools(1, 1, 4), 0.7, 0.4, func(c *config.Config) {
		c.Checkpoints = config.CheckpointsConfig{Store: storeURL}
		c.Templates["hy-kill"] = killTemplate()
	})
	// No capacity policy: burst work waits in burst, which the on-demand
	// worker processes below read; nothing else takes it.
	ctl, err := controller.New(r.store, controller.Options{ID: "ctl-1", Tick: hyTick, WorkerTTL: hyWorkerTTL,
		LeaderTTL: hyLeaderTTL, Events: r.pub, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("controller.New: %v", err)
	}
	if err := ctl.Start(context.Background()); err != nil {
		t.Fatalf("controller.Start: %v", err)
	}
	t.Cleanup(ctl.Stop)

	ctx := context.Background()
	store, err := checkpoint.Open(ctx, storeURL)
	if err != nil {
		t.Fatalf("checkpoint.Open: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	ledger := checkpoints.New(r.store)

	// Each worker process gets a config of its own that differs in its
	// checkpoint directory, so a restore never finds the files locally.
	live := map[string]*child{}
	seq := 0
	startWorker := func() {
		t.Helper()
		seq++
		id := fmt.Sprintf("od-%d", seq)
		c := r.cfg
		c.Worker.CheckpointDir = filepath.Join(r.dir, id+"-checkpoints")
		data, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(r.dir, id+".yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		w := r.startBallast(id, "worker", "--config", path, "--pool", "ondemand", "--id", id, "--slots", "1")
		testenv.Eventually(t, 15*time.Second, id+" registered", func() bool {
			if w.exited() {
				t.Fatalf("%s exited:\n%s", id, w.log())
			}
			return r.hasWorker(id)
		})
		live[id] = w
	}
	startWorker()
	startWorker()

	modes := []string{"delay", "report", "commit"}
	var tally killTally
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x6b696c6c))
	for trial := 0; trial < trials; trial++ {
		mode := modes[trial%len(modes)]
		record := filepath.Join(r.dir, fmt.Sprintf("kill-%d", trial))
		rec, _ := json.Marshal(record)
		id := r.submit(jobs.Submission{Template: "hy-kill", IdempotencyKey: fmt.Sprintf("kill-%d", trial),
			Params: map[string]json.RawMessage{"record": rec}})
		var holder string
		testenv.Eventually(t, 15*time.Second, "the job running", func() bool {
			j := r.job(id)
			r.mustNotFail(j)
			holder = j.Worker
			return j.State == jobs.StateRunning && live[holder] != nil
		})
		victim := live[holder]

		// Wait for the moment to kill at. Polls are short so the kill lands
		// within a few milliseconds of what it waits for.
		target := 1 + rng.IntN(6)
		switch mode {
		case "delay":
			time.Sleep(time.Duration(300+rng.IntN(2500)) * time.Millisecond)
		case "report":
			testenv.Eventually(t, 20*time.Second, fmt.Sprintf("step %d reported", target), func() bool {
				return len(readLines(record+".reported")) >= target
			})
		case "commit":
			testenv.Eventually(t, 20*time.Second, fmt.Sprintf("a commit of step %d or later", target), func() bool {
				return checkpointStep(r.job(id).Checkpoint) >= target
			})
		}
		if err := victim.cmd.Process.Kill(); err != nil {
			t.Fatalf("SIGKILL %s: %v", holder, err)
		}
		select {
		case <-victim.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not die", holder)
		}
		delete(live, holder)
		// The killed worker can commit nothing more, and the next attempt
		// checks only: what the ledger holds now is what the next attempt
		// must restore.
		keys, err := ledger.Committed(ctx, id)
		if err != nil {
			t.Fatalf("ledger: %v", err)
		}
		kept := checkpoint.DescribeKept(ctx, store, id, keys, "no store")
		reported := readLines(record + ".reported")
		startWorker()

		testenv.Eventually(t, 30*time.Second, "the next attempt to check its checkpoint", func() bool {
			j := r.job(id)
			r.mustNotFail(j)
			return j.State == jobs.StateSucceeded
		})
		res := readLines(record + ".result")
		if len(res) != 1 {
			t.Fatalf("trial %d: result lines %q, want one", trial, res)
		}
		var attempt, step int
		var verdict string
		if _, err := fmt.Sscanf(res[0], "%d %s %d", &attempt, &verdict, &step); err != nil {
			t.Fatalf("trial %d: bad result line %q", trial, res[0])
		}
		last := 0
		if len(reported) > 0 {
			last, _ = strconv.Atoi(reported[len(reported)-1])
		}
		var tokens []string
		for _, k := range kept {
			if k.Error != "" {
				t.Fatalf("trial %d: committed manifest %s unreadable: %s", trial, k.Manifest, k.Error)
			}
			tokens = append(tokens, k.Token)
		}
		t.Logf("trial %d (%s, kill of %s): reported up to step %d, committed %v, next attempt %d: %s step %d",
			trial, mode, holder, last, tokens, attempt, verdict, step)

		switch verdict {
		case "mismatch":
			tally.mismatches++
			t.Errorf("trial %d: the files of step %d do not match their sums", trial, step)
		case "missing":
			tally.missing++
			t.Errorf("trial %d: resume point step=%d but its files are missing", trial, step)
		case "fresh":
			tally.fresh++
			if len(tokens) > 0 {
				t.Errorf("trial %d: started afresh though %v were committed", trial, tokens)
			}
		case "ok":
			got := "step=" + strconv.Itoa(step)
			switch {
			case len(tokens) > 0 && got == tokens[0]:
			case len(tokens) > 1 && got == tokens[1]:
				tally.fallback++
			default:
				t.Errorf("trial %d: restored %s, want the newest commit or the one before of %v", trial, got, tokens)
			}
			if step == last {
				tally.newest++
			} else {
				tally.previous++
			}
		default:
			t.Fatalf("trial %d: unknown verdict %q", trial, verdict)
		}
		if attempt < 2 {
			t.Errorf("trial %d: the check ran in attempt %d, want a later one", trial, attempt)
		}
	}
	t.Logf("%d trials: restored the checkpoint being reported at the kill %d, an earlier complete one %d (of them the commit before the newest %d), none committed yet %d; hash mismatches %d, tokens with missing files %d",
		trials, tally.newest, tally.previous, tally.fallback, tally.fresh, tally.mismatches, tally.missing)
}

// readLines returns the lines of path; a missing file has none.
func readLines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
