//go:build linux

package workers

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestSupervisorKilledAfterItsJobEndedPassesTheJobsExit: the kill reaches
// a supervisor whose job has already exited but whose SIGCHLD it has not
// handled yet (here: the supervisor is stopped while its job ends, then
// gets the kill before it runs again). It passes the job's own exit up,
// as a job that did its work, instead of reporting it killed.
func TestSupervisorKilledAfterItsJobEndedPassesTheJobsExit(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	cmd := jobCommand(sh, []string{"sh", "-c", "sleep 0.3; exit 0"}, cgroupJoin{}, nil)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL); _ = syscall.Kill(pid, syscall.SIGCONT) })
	poll := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	poll("the job to start", func() bool { return len(liveDescendants(pid)) > 0 })
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Stopped, the supervisor cannot reap: its job ends as a zombie.
	poll("the job to exit", func() bool { return len(liveDescendants(pid)) == 0 })
	if err := syscall.Kill(pid, supervisorKill); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the supervisor exited %d (%s), want the job's own 0", code, cmd.ProcessState)
	}
}
