//go:build linux

package workers

import "golang.org/x/sys/unix"

// GuardProcess makes the calling process undumpable. Its /proc files
// (environ, mem, maps, fd) then belong to root, and the kernel lets no
// process of the same user ptrace it, read its memory or its environment:
// only root, or a holder of CAP_SYS_PTRACE, still can. Ballast's services
// call it at start, before any job runs: a job run as the worker's own
// user (no run_as) can otherwise read the credentials from
// /proc/WORKER/environ, where the variables the process started with
// stay whatever os.Unsetenv does, and from /proc/WORKER/mem. The cost:
// no core dumps of the process, and a debugger must attach as root.
func GuardProcess() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
