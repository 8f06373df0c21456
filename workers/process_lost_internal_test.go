package workers

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// startWaitLater starts script in a process group of its own and, once
// exited is true, waits until it is a zombie before anything reads its
// exit: the moment a stop meets a job that has ended but whose end the
// run loop has not seen yet. The goroutine that waits for it starts
// after lag, as a busy machine may schedule it.
func startWaitLater(t *testing.T, script string, exited bool, lag time.Duration) (*exec.Cmd, chan error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	if exited {
		stat := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat"
		deadline := time.Now().Add(5 * time.Second)
		for {
			b, err := os.ReadFile(stat)
			// The state follows the command name in parentheses.
			if err == nil && strings.HasPrefix(string(b[strings.LastIndexByte(string(b), ')')+1:]), " Z") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the job did not exit: %s %v", b, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waited := make(chan error, 1)
	go func() {
		time.Sleep(lag)
		waited <- cmd.Wait()
	}()
	return cmd, waited
}

// stopTestWorker is a worker for the stop tests, which need /proc to
// see a job exit, and a maker of one-attempt jobs with a second of grace
// for them to stop.
func stopTestWorker(t *testing.T) (*Worker, func() *running) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see the job exit")
	}
	w, err := New(nil, Options{Slots: 1}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	return w, func() *running {
		return newRunning(jobs.Job{ID: "j", Attempt: 1, Spec: jobs.Spec{Grace: jobs.Duration(time.Second)}}, "w", w.opts.Now)
	}
}

// TestALostAttemptThatExitedFirstIsSettledAsAnEnd: a stop for a lost
// attempt (its record gone or moved on) that reaches a job which has just
// exited by itself finds the job's own exit: the job did its work, and is
// settled as an end (so that an end no record can take is published), not
// as a stop after which recovery would run it again. A job the kill does
// stop stays a stopped, lost attempt.
func TestALostAttemptThatExitedFirstIsSettledAsAnEnd(t *testing.T) {
	w, attempt := stopTestWorker(t)
	lost := func() *running {
		r := attempt()
		r.stop(stopLost)
		return r
	}

	cmd, waited := startWaitLater(t, "exit 0", true, 0)
	res := w.stopProcess(lost(), cmd, waited)
	if !res.succeeded() || res.killed {
		t.Errorf("a job that exited 0 before the kill: outcome %+v, want its own success", res)
	}
	cmd, waited = startWaitLater(t, "exit 3", true, 0)
	if res := w.stopProcess(lost(), cmd, waited); res.stop != "" || res.exitCode == nil || *res.exitCode != 3 {
		t.Errorf("a job that exited 3 before the kill: outcome %+v, want its own exit 3", res)
	}
	cmd, waited = startWaitLater(t, "sleep 30", false, 0)
	if res := w.stopProcess(lost(), cmd, waited); res.stop != stopLost || !res.killed {
		t.Errorf("a running job: outcome %+v, want it killed as lost", res)
	}
}
