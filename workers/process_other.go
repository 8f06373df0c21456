//go:build !linux

package workers

import "syscall"

// processAttrs puts the job in its own process group. Outside Linux there is
// no parent-death signal: a crashed worker can leave its job running.
func processAttrs() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func signalGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }
