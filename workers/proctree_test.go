//go:build linux

package workers_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// escapingJob runs a job whose grandchild does everything a process can to
// outlive it without privileges: it starts a session of its own (out of the
// job's process group) and ignores SIGTERM. The grandchild writes its PID
// to "grandchild", the job's shell its own to "pid".
func (e *env) escapingJob() jobs.Spec {
	return e.shell(`
setsid sh -c 'trap "" TERM; echo $$ > "$1/grandchild.tmp"; mv "$1/grandchild.tmp" "$1/grandchild"; exec sleep 300' sh "$BALLAST_PARAM_DIR" &
echo $$ > "$BALLAST_PARAM_DIR/pid.tmp"; mv "$BALLAST_PARAM_DIR/pid.tmp" "$BALLAST_PARAM_DIR/pid"
sleep 300`)
}

// waitGone waits up to within for the process whose PID a job wrote to
// disappear (a zombie still counts as there) and says how long it took.
func waitGone(t *testing.T, what, pidText string, since time.Time, within time.Duration) time.Duration {
	t.Helper()
	for !time.Now().After(since.Add(within)) {
		if !alive(t, pidText) {
			return time.Since(since)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Errorf("%s (PID %s) still runs %s after its attempt ended", what, strings.TrimSpace(pidText), within)
	return within
}

func TestCancelKillsEscapedGrandchild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	j := e.submit(e.escapingJob(), queues.QueueCore)
	gc, pid := e.waitFile("grandchild", wait), e.waitFile("pid", wait)
	if res, err := e.store.Cancel(context.Background(), j.ID); err != nil || res != queues.CancelRequested {
		t.Fatalf("Cancel = %q, %v", res, err)
	}
	got := e.waitTerminal(j.ID, wait)
	ended := time.Now()
	if got.State != jobs.StateCancelled {
		t.Fatalf("state %s error %q, want cancelled", got.State, got.LastError)
	}
	t.Logf("grandchild gone %s after the cancelled attempt ended", waitGone(t, "the grandchild", gc, ended, time.Second))
	waitGone(t, "the job's shell", pid, ended, time.Second)
}

func TestTimeoutKillsEscapedGrandchild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	spec := e.escapingJob()
	// Long enough for a loaded machine to start the grandchild before the
	// timeout, or the test would wait for a file that never comes.
	spec.Timeout = jobs.Duration(2 * time.Second)
	spec.Grace = jobs.Duration(200 * time.Millisecond)
	j := e.submit(spec, queues.QueueCore)
	gc := e.waitFile("grandchild", wait)
	got := e.waitTerminal(j.ID, wait)
	ended := time.Now()
	if got.State != jobs.StateFailed || got.LastError != "timed out" {
		t.Fatalf("state %s error %q, want failed and timed out", got.State, got.LastError)
	}
	t.Logf("grandchild gone %s after the timed out attempt ended", waitGone(t, "the grandchild", gc, ended, time.Second))
}

// TestJobExitKillsLeftovers: a job that exits by itself leaves nothing
// running either; what it started belongs to the attempt.
func TestJobExitKillsLeftovers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	spec := e.shell(`
setsid sh -c 'trap "" TERM; echo $$ > "$1/grandchild.tmp"; mv "$1/grandchild.tmp" "$1/grandchild"; exec sleep 300' sh "$BALLAST_PARAM_DIR" &
while [ ! -e "$BALLAST_PARAM_DIR/grandchild" ]; do sleep 0.01; done
exit 3`)
	j := e.submit(spec, queues.QueueCore)
	got := e.waitTerminal(j.ID, wait)
	ended := time.Now()
	if got.State != jobs.StateFailed || got.ExitCode == nil || *got.ExitCode != 3 {
		t.Fatalf("state %s exit %s, want failed with the job's exit code 3", got.State, code(got))
	}
	waitGone(t, "the grandchild", e.read("grandchild"), ended, time.Second)
}

// TestWorkerSIGKILLKillsJobTree kills a real worker process with SIGKILL,
// as the OOM killer or a node failure would: its job and the job's escaped
// grandchild must be gone within a second.
func TestWorkerSIGKILLKillsJobTree(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	worker := e.startHelperWorker()
	e.submit(e.escapingJob(), queues.QueueCore)
	gc, pid := e.waitFile("grandchild", 3*wait), e.waitFile("pid", wait)
	killed := time.Now()
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("grandchild gone %s after the worker's SIGKILL", waitGone(t, "the grandchild", gc, killed, time.Second))
	waitGone(t, "the job's shell", pid, killed, time.Second)
}
