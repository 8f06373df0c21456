//go:build linux

package workers

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exitedOnItsOwn reports whether child pid has already exited, looking
// without reaping it (WNOWAIT), so cmd.Wait still collects its status.
// A stop must ask this of the kernel, not of the goroutine that waits
// for the process: that goroutine may not have run yet when a process
// has exited, most of all on a busy machine, and a stop that took the
// exit for its own would requeue a job that did its work.
func exitedOnItsOwn(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if errors.Is(err, unix.ECHILD) {
		// Reaped already: the waiting goroutine has the status.
		return true
	}
	// With WNOHANG and nothing to report, Linux zeroes the siginfo.
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}
