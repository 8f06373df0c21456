//go:build linux

package provider

import "syscall"

// workerAttr puts a local worker in its own process group (so a Ctrl-C on
// the controller's terminal does not reach it: the controller drains it
// deliberately) and asks the kernel to SIGKILL it if the controller dies,
// so no orphan keeps running, and billing, with nobody to release it.
//
// Pdeathsig fires when the thread that forked the child exits, not the
// process. The Go runtime does not retire threads unless a goroutine exits
// while locked to one, which this package never does.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
