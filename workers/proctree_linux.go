//go:build linux

package workers

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// killBound limits how long killDescendants keeps at it: a process stuck in
// uninterruptible sleep (a dead NFS server) dies when the kernel lets it,
// and the supervisor must still end so the worker can free the slot.
const killBound = 10 * time.Second

// killDescendants kills the job's process group and every process below the
// calling supervisor, then reaps them. Orphans of the tree are the
// supervisor's children (it is a subreaper), so a walk of /proc from its own
// PID finds everything the job started, whatever process group or session
// it moved to. Forks racing with the walk are caught by walking again until
// nothing is left alive.
func killDescendants(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	self := os.Getpid()
	// Real time: this runs in the supervisor process, which has no
	// worker clock, and waits on the kernel reaping processes.
	deadline := time.Now().Add(killBound)
	for time.Now().Before(deadline) {
		live := liveDescendants(self)
		for _, pid := range live {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		reapChildren(0)
		if len(live) == 0 {
			// Everything below is dead; what is left are zombies, all
			// ours by now: reap them until there is no child at all.
			for {
				var ws syscall.WaitStatus
				_, err := syscall.Wait4(-1, &ws, 0, nil)
				if err == syscall.EINTR {
					continue
				}
				if err != nil {
					return
				}
			}
		}
		// A killed process takes a moment to become a zombie.
		time.Sleep(time.Millisecond)
	}
}

// liveDescendants lists the processes below root that are not zombies.
func liveDescendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	zombie := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := procStat(pid)
		if !ok {
			continue // ended since the listing
		}
		children[ppid] = append(children[ppid], pid)
		zombie[pid] = state == 'Z' || state == 'X'
	}
	var live []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !zombie[c] {
				live = append(live, c)
			}
			queue = append(queue, c)
		}
	}
	return live
}

// procStat reads the parent PID and state of pid from /proc/PID/stat. The
// command name in parentheses may hold spaces and parentheses itself, so
// the fields are counted from the last ')'.
func procStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+4 >= len(b) {
		return 0, 0, false
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(string(fields[1]))
	if err != nil {
		return 0, 0, false
	}
	return ppid, fields[0][0], true
}
