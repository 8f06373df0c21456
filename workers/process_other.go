//go:build !linux

package workers

import (
	"os/exec"
	"syscall"

	"github.com/ballastdev/ballast/workers/runas"
)

// jobCommand puts the job in its own process group. Outside Linux there is
// neither a parent-death signal nor a child subreaper: a crashed worker can
// leave its job running, and a process that leaves the group survives a stop.
// Cgroups are Linux's: cg is never set here, nor is the run_as user
// (refused at New).
func jobCommand(path string, argv []string, _ cgroupJoin, _ *runas.User) *exec.Cmd {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func askStop(pid int)  { _ = syscall.Kill(-pid, syscall.SIGTERM) }
func killTree(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
func killHard(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
