//go:build linux

package workers

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/ballastdev/ballast/workers/runas"
)

// jobCommand runs the job under a supervisor (see SupervisorCommand): this
// very binary, re-executed through /proc/self/exe so that an upgrade that
// replaced the file on disk cannot slip another version in. The supervisor
// has a process group of its own and is told by the kernel when the worker
// dies, however it dies: then it kills the job's whole tree.
//
// In a cgroup, the supervisor is born in it: on v2 through clone3's
// CLONE_INTO_CGROUP (cg.dir), on v1 by writing itself into each
// hierarchy's cgroup.procs (cg.procs) before it starts the job. Either way
// the job never runs a moment outside its limits.
//
// With ru set (run_as), the supervisor starts the job as that user: it
// joins the cgroups and arms its signals as root first, then drops only
// the job (see supervisorArgs.user).
func jobCommand(path string, argv []string, cg cgroupJoin, ru *runas.User) *exec.Cmd {
	args := []string{SupervisorCommand, "--ppid", strconv.Itoa(os.Getpid())}
	for _, f := range cg.procs {
		args = append(args, "--cgroup", f)
	}
	if ru != nil {
		args = append(args, "--user", formatCredential(ru.UID, ru.GID, ru.Groups))
	}
	args = append(append(args, "--path", path, "--"), argv...)
	cmd := exec.Command("/proc/self/exe", args...)
	if exe, err := os.Executable(); err == nil {
		cmd.Args[0] = exe // what ps shows
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: supervisorKill}
	if cg.fd != nil {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(cg.fd.Fd())
	}
	return cmd
}

// askStop asks the job to stop: the supervisor forwards SIGTERM to the job's
// process group.
func askStop(pid int) { _ = syscall.Kill(pid, syscall.SIGTERM) }

// killTree has the supervisor kill every process of the job and exit.
func killTree(pid int) { _ = syscall.Kill(pid, supervisorKill) }

// killHard is the last resort for a supervisor that did not exit after
// killTree.
func killHard(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
