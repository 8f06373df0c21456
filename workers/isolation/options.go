package isolation

import (
	"errors"
	"log/slog"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// DefaultRoot is where cgroup filesystems are mounted.
const DefaultRoot = "/sys/fs/cgroup"

// parentName is the cgroup under which every worker keeps its groups, one
// directory per worker ID, so a worker can tell its own leftovers and a dead
// worker's from a live one's.
const parentName = "ballast"

// Options configures a Manager.
type Options struct {
	Mode Mode
	// Root is where the cgroup filesystems are mounted (DefaultRoot).
	Root string
	// WorkerID names the worker's cgroup directory.
	WorkerID string
	// QoS holds the groups and their limits.
	QoS jobs.QoS
	// LockDir holds the workers' liveness locks (DefaultLockDir); every
	// worker on a machine must use the same.
	LockDir string
	// SysBlock is /sys/dev/block, for resolving partitions (tests).
	SysBlock string
	Logger   *slog.Logger
}

// ErrRequired is returned by Job when a limit configured with required:
// true is not in force; the job must not run.
var ErrRequired = errors.New("required QoS limit not in force")
