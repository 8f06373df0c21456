package workers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

func TestProcessSuccessOutputAndEnvironment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	w := e.start(o)
	spec := e.shell(`
echo "id=$BALLAST_JOB_ID"
echo "attempt=$BALLAST_ATTEMPT"
echo "ckdir=$BALLAST_CHECKPOINT_DIR"
echo "resume=[$BALLAST_RESUME_FROM]"
echo "epochs=$BALLAST_PARAM_EPOCHS"
echo "lr=$BALLAST_PARAM_LR"
echo "mode=$BALLAST_PARAM_MODE"
echo "something on stderr" >&2
echo visited > "$BALLAST_CHECKPOINT_DIR/visited" && echo "ckdir-writable"
exit 0`)
	// Parameters pass through JSON in the record: a whole number must reach
	// the job as "10", not "1e+01".
	spec.Params["epochs"] = 10
	spec.Params["lr"] = 0.25
	spec.Params["mode"] = "fast"
	j := e.submit(spec, queues.QueueCore)

	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.ExitCode == nil || *got.ExitCode != 0 {
		t.Fatalf("state %s exit %s error %q, want succeeded with exit code 0", got.State, code(got), got.LastError)
	}
	if got.Attempt != 1 || got.Retries != 0 || got.Requeues != 0 || got.LastError != "" {
		t.Errorf("attempt %d retries %d requeues %d error %q, want 1, 0, 0, none", got.Attempt, got.Retries, got.Requeues, got.LastError)
	}
	if got.Worker != w.ID() {
		t.Errorf("worker %q, want %q", got.Worker, w.ID())
	}
	if got.StartedAt.IsZero() || got.FinishedAt.Before(got.StartedAt) {
		t.Errorf("started %v finished %v", got.StartedAt, got.FinishedAt)
	}

	ckDir := filepath.Join(o.CheckpointDir, j.ID)
	lines := e.logs(j.ID)
	for _, want := range []string{
		"id=" + j.ID, "attempt=1", "ckdir=" + ckDir, "resume=[]", "epochs=10", "lr=0.25", "mode=fast",
	} {
		if !hasLine(lines, "stdout", want) {
			t.Errorf("stdout line %q missing from the log %+v", want, lines)
		}
	}
	if !hasLine(lines, "stderr", "something on stderr") {
		t.Errorf("stderr line missing from the log %+v", lines)
	}
	for _, l := range lines {
		if l.Attempt != 1 {
			t.Errorf("log line %+v is not tagged attempt 1", l)
		}
	}
	if !hasLine(lines, "stdout", "ckdir-writable") {
		t.Errorf("the job could not write in BALLAST_CHECKPOINT_DIR: %+v", lines)
	}
	// The job is over: nothing will resume from its checkpoint directory.
	if _, err := os.Stat(ckDir); !os.IsNotExist(err) {
		t.Errorf("checkpoint dir of a finished job still exists: %v", err)
	}
	// The worker keeps the full output of each attempt in a local file too.
	b, err := os.ReadFile(filepath.Join(o.LogDir, j.ID+".1.log"))
	if err != nil {
		t.Fatalf("local log: %v", err)
	}
	if !strings.Contains(string(b), "mode=fast\n") || !strings.Contains(string(b), "something on stderr\n") {
		t.Errorf("local log lacks the job's output:\n%s", b)
	}
}

func TestProcessNonRetryableFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	spec := e.shell(`echo "$BALLAST_ATTEMPT" >> "$BALLAST_PARAM_DIR/runs"; echo giving up >&2; exit 3`)
	spec.MaxRetries = 2 // ignored: the job is not retryable
	j := e.submit(spec, queues.QueueCore)

	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateFailed || got.ExitCode == nil || *got.ExitCode != 3 {
		t.Fatalf("state %s exit %s, want failed with exit code 3", got.State, code(got))
	}
	if !strings.Contains(got.LastError, "code 3") {
		t.Errorf("last error %q does not mention code 3", got.LastError)
	}
	if got.Attempt != 1 || got.Retries != 0 {
		t.Errorf("attempt %d retries %d, want 1 and 0", got.Attempt, got.Retries)
	}
	if runs := e.read("runs"); runs != "1\n" {
		t.Errorf("runs %q, want one run", runs)
	}
	if !hasLine(e.logs(j.ID), "stderr", "giving up") {
		t.Errorf("stderr of the failed job missing from its log")
	}
}

func TestProcessRetriesUntilSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	spec := e.shell(`
echo "$BALLAST_ATTEMPT" >> "$BALLAST_PARAM_DIR/runs"
if [ "$BALLAST_ATTEMPT" -lt 3 ]; then echo "attempt $BALLAST_ATTEMPT fails" >&2; exit 5; fi
echo done`)
	spec.Retryable = true
	spec.MaxRetries = 3
	j := e.submit(spec, queues.QueueCore)

	got := e.waitTerminal(j.ID, retryWait)
	if got.State != jobs.StateSucceeded || got.ExitCode == nil || *got.ExitCode != 0 {
		t.Fatalf("state %s exit %s error %q, want succeeded", got.State, code(got), got.LastError)
	}
	if got.Attempt != 3 || got.Retries != 2 || got.Requeues != 0 {
		t.Errorf("attempt %d retries %d requeues %d, want 3, 2, 0", got.Attempt, got.Retries, got.Requeues)
	}
	if got.LastError != "" {
		t.Errorf("a success left the error %q", got.LastError)
	}
	if runs := e.read("runs"); runs != "1\n2\n3\n" {
		t.Errorf("runs %q, want attempts 1, 2, 3 once each", runs)
	}
	lines := e.logs(j.ID)
	for _, a := range []int{1, 2} {
		found := false
		for _, l := range lines {
			found = found || (l.Attempt == a && l.Stream == "stderr" && strings.Contains(l.Text, "fails"))
		}
		if !found {
			t.Errorf("the log lacks attempt %d's failure: %+v", a, lines)
		}
	}
}

func TestProcessRetriesExhausted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	spec := e.shell(`echo "$BALLAST_ATTEMPT" >> "$BALLAST_PARAM_DIR/runs"; exit 4`)
	spec.Retryable = true
	spec.MaxRetries = 1
	j := e.submit(spec, queues.QueueCore)

	got := e.waitTerminal(j.ID, retryWait)
	if got.State != jobs.StateFailed || got.ExitCode == nil || *got.ExitCode != 4 {
		t.Fatalf("state %s exit %s, want failed with exit code 4", got.State, code(got))
	}
	if got.Attempt != 2 || got.Retries != 1 {
		t.Errorf("attempt %d retries %d, want 2 and 1", got.Attempt, got.Retries)
	}
	if !strings.Contains(got.LastError, "code 4") {
		t.Errorf("last error %q does not mention code 4", got.LastError)
	}
	if runs := e.read("runs"); runs != "1\n2\n" {
		t.Errorf("runs %q, want exactly two attempts", runs)
	}
}

func TestCheckpointFromStdoutWhileRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	spec := e.shell(`
echo '{"checkpoint":"step-1"}'
while [ ! -e "$BALLAST_PARAM_DIR/go" ]; do sleep 0.02; done
echo '{"not_a_checkpoint": 1}'
echo '{"checkpoint":{"epoch":3}}'
echo '{"checkpoint":"step-2"}'`)
	spec.Checkpointable = true
	j := e.submit(spec, queues.QueueCore)

	// Recorded as soon as it is printed, not only when the job ends.
	e.waitFor(j.ID, wait, "checkpoint step-1 while running", func(j jobs.Job) bool {
		return j.State == jobs.StateRunning && j.Checkpoint == "step-1"
	})
	e.touch("go")
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Checkpoint != "step-2" {
		t.Fatalf("state %s checkpoint %q, want succeeded with the last checkpoint step-2", got.State, got.Checkpoint)
	}
	if !hasLine(e.logs(j.ID), "stdout", `{"checkpoint":"step-2"}`) {
		t.Errorf("checkpoint lines are output too and belong in the log")
	}
}

func TestCheckpointNonStringValueKeptAsJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	j := e.submit(e.shell(`echo '{"checkpoint": {"epoch": 3}}'`), queues.QueueCore)
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Checkpoint != `{"epoch": 3}` {
		t.Fatalf("state %s checkpoint %q, want the JSON object's text", got.State, got.Checkpoint)
	}
}

func TestCheckpointFromMarkerFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	j := e.submit(e.shell(`printf 'marker-7\n' > "$BALLAST_CHECKPOINT_DIR/`+workers.CheckpointMarker+`"`), queues.QueueCore)
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Checkpoint != "marker-7" {
		t.Fatalf("state %s checkpoint %q, want succeeded with checkpoint marker-7", got.State, got.Checkpoint)
	}
}

func TestRetryResumesFromLastCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	spec := e.shell(`
echo "$BALLAST_ATTEMPT:[$BALLAST_RESUME_FROM]" >> "$BALLAST_PARAM_DIR/runs"
if [ "$BALLAST_ATTEMPT" = 1 ]; then
  echo '{"checkpoint":"ck-early"}'
  echo '{"checkpoint":"ck-late"}'
  exit 9
fi`)
	spec.Retryable = true
	spec.Checkpointable = true
	spec.MaxRetries = 1
	j := e.submit(spec, queues.QueueCore)

	got := e.waitTerminal(j.ID, retryWait)
	if got.State != jobs.StateSucceeded || got.Attempt != 2 || got.Retries != 1 {
		t.Fatalf("state %s attempt %d retries %d error %q, want succeeded at attempt 2 after one retry",
			got.State, got.Attempt, got.Retries, got.LastError)
	}
	if runs := e.read("runs"); runs != "1:[]\n2:[ck-late]\n" {
		t.Errorf("runs %q, want attempt 2 to resume from ck-late", runs)
	}
	if got.Checkpoint != "ck-late" {
		t.Errorf("checkpoint %q, want ck-late kept", got.Checkpoint)
	}
}

func TestTimeoutKillsJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	spec := e.shell(`echo $$ > "$BALLAST_PARAM_DIR/pid"; sleep 30; echo "$BALLAST_ATTEMPT" > "$BALLAST_PARAM_DIR/woke"`)
	// Long enough for a loaded machine to start the shell and write its
	// PID before the timeout.
	spec.Timeout = jobs.Duration(1500 * time.Millisecond)
	spec.Grace = jobs.Duration(200 * time.Millisecond)
	j := e.submit(spec, queues.QueueCore)

	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateFailed || got.LastError != "timed out" {
		t.Fatalf("state %s error %q, want failed and timed out", got.State, got.LastError)
	}
	if got.ExitCode == nil || *got.ExitCode >= 0 {
		t.Errorf("exit code %s, want a signal death", code(got))
	}
	if d := got.FinishedAt.Sub(got.StartedAt); d < 1500*time.Millisecond || d > 5*time.Second {
		t.Errorf("the attempt ran %s, want about its 1.5s timeout", d)
	}
	if alive(t, e.read("pid")) {
		t.Errorf("the timed out process still exists")
	}
	if e.read("woke") != "" {
		t.Errorf("the job ran past its timeout")
	}
}

func TestTimeoutKillsJobIgnoringTERM(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	// The trap comes first, and the timeout leaves a loaded machine time
	// to start the shell: a SIGTERM before the trap kills the job at once,
	// which is the shell's doing, not a worker that skipped the grace.
	spec := e.shell(`
trap 'echo ignored >> "$BALLAST_PARAM_DIR/term"' TERM
echo $$ > "$BALLAST_PARAM_DIR/pid"
while :; do sleep 0.05; done`)
	spec.Timeout = jobs.Duration(1500 * time.Millisecond)
	spec.Grace = jobs.Duration(300 * time.Millisecond)
	j := e.submit(spec, queues.QueueCore)

	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateFailed || got.LastError != "timed out" {
		t.Fatalf("state %s error %q, want failed and timed out", got.State, got.LastError)
	}
	if got.ExitCode == nil || *got.ExitCode >= 0 {
		t.Errorf("exit code %s, want a signal death (SIGKILL)", code(got))
	}
	// SIGTERM came at the timeout; SIGKILL only after the grace.
	if d := got.FinishedAt.Sub(got.StartedAt); d < 1800*time.Millisecond || d > 5*time.Second {
		t.Errorf("the attempt ran %s, want timeout plus grace (1.8s) and not much more", d)
	}
	if !strings.Contains(e.read("term"), "ignored") {
		t.Errorf("the job never saw SIGTERM")
	}
	if alive(t, e.read("pid")) {
		t.Errorf("the process that ignored SIGTERM still exists")
	}
}

func TestCancelStopsRunningJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	spec := e.shell(`
trap 'echo term > "$BALLAST_PARAM_DIR/term"; exit 0' TERM
echo started > "$BALLAST_PARAM_DIR/started"
while :; do sleep 0.05; done`)
	j := e.submit(spec, queues.QueueCore)
	e.waitFile("started", wait)

	res, err := e.store.Cancel(context.Background(), j.ID)
	if err != nil || res != queues.CancelRequested {
		t.Fatalf("Cancel = %q, %v; want %q", res, err, queues.CancelRequested)
	}
	asked := time.Now()
	got := e.waitFor(j.ID, 2*time.Second, "the worker to stop the cancelled job", func(j jobs.Job) bool { return j.State.Terminal() })
	if took := time.Since(asked); took > 1500*time.Millisecond {
		t.Errorf("stopping took %s, want about a heartbeat", took)
	}
	if got.State != jobs.StateCancelled || got.Attempt != 1 || !strings.Contains(got.LastError, "cancelled") {
		t.Fatalf("state %s attempt %d error %q, want cancelled at attempt 1", got.State, got.Attempt, got.LastError)
	}
	if e.read("term") != "term\n" {
		t.Errorf("the job was not sent SIGTERM")
	}
}

func TestDrainCheckpointsAndRequeues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.shell(`
echo "$BALLAST_ATTEMPT:[$BALLAST_RESUME_FROM]" >> "$BALLAST_PARAM_DIR/runs"
if [ "$BALLAST_ATTEMPT" -ge 2 ]; then exit 0; fi
trap 'echo "{\"checkpoint\":\"ck-at-term\"}"; echo term >> "$BALLAST_PARAM_DIR/term"; exit 0' TERM
echo started > "$BALLAST_PARAM_DIR/started"
while :; do sleep 0.05; done`)
	spec.Checkpointable = true
	o := e.options()
	w1 := e.start(o)
	j := e.submit(spec, queues.QueueCore)
	e.waitFile("started", wait)

	began := time.Now()
	w1.Stop()
	if took := time.Since(began); took < o.DrainTimeout || took > o.DrainTimeout+3*time.Second {
		t.Errorf("Stop took %s, want the %s drain timeout then a prompt checkpoint", took, o.DrainTimeout)
	}
	if w1.Running() != 0 {
		t.Errorf("%d jobs still running after Stop", w1.Running())
	}
	if e.read("term") != "term\n" {
		t.Errorf("the job was not sent SIGTERM exactly once: %q", e.read("term"))
	}
	got := e.get(j.ID)
	if got.State != jobs.StateQueued || got.Attempt != 2 || got.Requeues != 1 || got.Retries != 0 {
		t.Fatalf("after the drain: state %s attempt %d requeues %d retries %d, want queued attempt 2 requeued once",
			got.State, got.Attempt, got.Requeues, got.Retries)
	}
	if got.Checkpoint != "ck-at-term" || got.ExitCode != nil || !strings.Contains(got.LastError, "draining") {
		t.Errorf("checkpoint %q exit %s error %q, want ck-at-term, no exit code and a drain reason", got.Checkpoint, code(got), got.LastError)
	}
	ws, err := registry.New(e.store).Workers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ws {
		if x.ID == w1.ID() {
			t.Errorf("the stopped worker is still registered")
		}
	}

	w2 := e.start(e.options())
	got = e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 2 || got.Worker != w2.ID() {
		t.Fatalf("state %s attempt %d worker %q, want attempt 2 succeeded on %q", got.State, got.Attempt, got.Worker, w2.ID())
	}
	if runs := e.read("runs"); runs != "1:[]\n2:[ck-at-term]\n" {
		t.Errorf("runs %q, want attempt 2 to resume from ck-at-term", runs)
	}
}

func TestDrainLetsShortJobFinish(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	o.DrainTimeout = 5 * time.Second
	w := e.start(o)
	spec := e.shell(`
trap 'echo term >> "$BALLAST_PARAM_DIR/term"' TERM
echo started > "$BALLAST_PARAM_DIR/started"
while [ ! -e "$BALLAST_PARAM_DIR/go" ]; do sleep 0.02; done`)
	j := e.submit(spec, queues.QueueCore)
	e.waitFile("started", wait)

	stopped := make(chan struct{})
	go func() { w.Stop(); close(stopped) }()
	// The worker waits for the job inside the drain timeout...
	testenv.Eventually(t, wait, "the worker to report draining", func() bool {
		ws, err := registry.New(e.store).Workers(context.Background())
		if err != nil {
			t.Error(err)
			return true
		}
		for _, x := range ws {
			if x.ID == w.ID() && x.Draining {
				return true
			}
		}
		return false
	})
	select {
	case <-stopped:
		t.Fatal("Stop returned while a job was still running inside the drain timeout")
	default:
	}
	e.touch("go")
	<-stopped
	got := e.get(j.ID)
	if got.State != jobs.StateSucceeded || got.Attempt != 1 {
		t.Fatalf("state %s attempt %d, want the job to finish during the drain", got.State, got.Attempt)
	}
	if e.read("term") != "" {
		t.Errorf("a job that finished inside the drain timeout was sent SIGTERM")
	}
}
