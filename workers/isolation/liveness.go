//go:build linux

package isolation

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultLockDir holds the liveness locks of the workers on this machine.
const DefaultLockDir = "/run/ballast/cgroups"

// A worker's cgroups hold no process while it is idle, so an empty cgroup
// does not make a dead worker: another worker starting beside it would
// remove a live one's groups. Each worker process therefore holds an
// exclusive flock on a file of its own, WORKERDIR.PID.lock, for its whole
// life; the kernel drops it however the process ends. A worker directory
// is stale when no such lock of it is held.

// holdLiveness creates and locks this process's lock file, before the
// worker makes any cgroup, so no other worker can see its cgroups unlocked.
func holdLiveness(dir, wdir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, wdir+"."+strconv.Itoa(os.Getpid())+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// alive reports whether a process holds a lock of worker directory wdir,
// removing the lock files of processes that are gone.
func alive(dir, wdir string) bool {
	entries, _ := os.ReadDir(dir)
	live := false
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), wdir+".")
		if !ok {
			continue
		}
		pid, ok := strings.CutSuffix(rest, ".lock")
		if !ok || strings.Trim(pid, "0123456789") != "" || pid == "" {
			continue
		}
		path := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			live = true
		} else if err == nil {
			_ = os.Remove(path) // its process is gone
		}
		f.Close()
	}
	return live
}

// releaseLiveness drops the lock and its file.
func releaseLiveness(f *os.File) {
	if f == nil {
		return
	}
	_ = os.Remove(f.Name())
	_ = f.Close()
}
