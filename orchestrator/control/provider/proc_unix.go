//go:build unix

package provider

import (
	"os"
	"syscall"
)

// groupAttr puts a script in its own process group, so a timeout can kill
// whatever it started too (a cloud CLI, a sleep) and not only the shell.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// terminate asks p to drain. Only the leader gets SIGTERM: a worker stops
// its own jobs, checkpointing them, and a group-wide SIGTERM would kill
// those jobs before they could checkpoint.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// forceStop kills p's whole process group, which p leads (groupAttr,
// workerAttr), so nothing it started outlives it. The leader is killed
// through p as well, which is safe even if it has already been reaped.
// Callers only force-stop a process they have not seen exit: once the
// leader is reaped and its group is empty the group ID could be reused.
func forceStop(p *os.Process) error {
	gerr := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if err := p.Kill(); err != nil && gerr != nil {
		return err
	}
	return nil
}
