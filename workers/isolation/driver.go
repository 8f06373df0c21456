//go:build linux

package isolation

import (
	"errors"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// driver is one cgroup version's way of doing the same things. Paths are
// relative to the ballast parent: WORKER/GROUP for a group, WORKER/GROUP/JOB
// for a job.
type driver interface {
	version() string
	// mkdir makes the cgroup in every hierarchy it is used in; job is true
	// for a job's cgroup.
	mkdir(rel string, job bool) error
	// Each setter sets one limit or says why it cannot.
	setCPU(rel string, cpus float64) error
	setMemory(rel string, b jobs.ByteSize) error
	setIO(rel, dev string, l jobs.IOLimit, job bool) error
	// join says how a job's process enters its cgroup before it runs:
	// cgroup.procs files the supervisor writes itself into (v1), or a
	// directory to open for clone3's CLONE_INTO_CGROUP (v2).
	join(group, job string) (procsFiles []string, cgroupDir string)
	// stats reads a job's counters; oom is its OOM-kill count.
	stats(job string) (s jobs.QoSStats, oom int64)
	// throttled reads a cgroup's CPU throttling so far.
	throttled(rel string) (seconds float64, periods int64)
	// kill ends every process in a job's cgroup.
	kill(job string) error
	// workers lists the worker directories under the ballast parent;
	// pids the processes in a tree; remove removes a tree everywhere.
	workers() []string
	pids(rel string) []int
	remove(rel string) error
}

// errNotCgroup marks a setting the worker could not make.
var errNotCgroup = errors.New("isolation: not available")
