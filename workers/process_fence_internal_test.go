package workers

import (
	"strconv"
	"testing"
	"time"
)

// TestAFencedJobThatExitedFirstIsSettledAsAnEnd: a self-fence that stops
// a job which has just exited by itself finds the job's own exit, even
// when the goroutine that waits for the process has not run yet (here it
// starts 300 ms late). The job did its work; settled as fenced, it would
// be requeued and its side effect done twice, which TestShortChaosRun
// saw on a loaded machine when a Redis pause fenced a worker at the
// moment a job ended. A job still running is stopped as fenced.
func TestAFencedJobThatExitedFirstIsSettledAsAnEnd(t *testing.T) {
	w, attempt := stopTestWorker(t)
	fenced := func() *running {
		r := attempt()
		r.fenceStop(time.Second)
		return r
	}
	for _, code := range []int{0, 3} {
		cmd, waited := startWaitLater(t, "exit "+strconv.Itoa(code), true, 300*time.Millisecond)
		if !exitedOnItsOwn(cmd.Process.Pid) {
			t.Fatalf("exit %d: the kernel does not report the zombie as exited", code)
		}
		res := w.stopProcess(fenced(), cmd, waited)
		if res.stop != "" || res.killed || res.exitCode == nil || *res.exitCode != code {
			t.Errorf("a job that exited %d before the fence: outcome %+v, want its own exit %d", code, res, code)
		}
	}
	cmd, waited := startWaitLater(t, "sleep 30", false, 0)
	if exitedOnItsOwn(cmd.Process.Pid) {
		t.Fatal("a running job is reported as exited")
	}
	if res := w.stopProcess(fenced(), cmd, waited); res.stop != stopFenced {
		t.Errorf("a running job: outcome %+v, want it stopped as fenced", res)
	}
}
