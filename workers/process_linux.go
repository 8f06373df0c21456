//go:build linux

package workers

import "syscall"

// processAttrs puts the job in its own process group (so a stop reaches its
// children) and has the kernel kill it if the worker dies: a SIGKILLed worker
// must not leave a job running that the controller is about to run again.
func processAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func signalGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }
