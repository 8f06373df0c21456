//go:build unix

package checkpoint

import (
	"errors"
	"syscall"
)

// ProcessAlive reports whether a process with pid runs on this machine (in
// this pid namespace). Signal 0 checks without sending: EPERM means it
// runs as another user.
func ProcessAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
