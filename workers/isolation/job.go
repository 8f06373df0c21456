//go:build linux

package isolation

import (
	"fmt"
	"os"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Job is the cgroup of one attempt.
type Job struct {
	m         *Manager
	group     string
	grel, rel string
	memory    jobs.ByteSize // the limit that holds: the job's, else the group's
	// Set lists the job's own limits that are in force.
	Set []queues.LimitState
	// groupSeconds and groupPeriods are the group's CPU throttling when
	// the job started.
	groupSeconds float64
	groupPeriods int64
}

// Group is the job's QoS group.
func (j *Job) Group() string { return j.group }

// Join says how the job's process enters the cgroup before it runs: the
// cgroup.procs files the supervisor writes its own PID into before it
// starts the job (v1), or the directory whose descriptor the worker hands
// to clone3 (v2).
//
// A group with shaped egress adds its net_cls or net_prio cgroup.procs: a
// v1 file the supervisor writes itself into even under v2.
func (j *Job) Join() (procsFiles []string, dir string) {
	procsFiles, dir = j.m.d.join(j.grel, j.rel)
	if f := j.m.net.join(j.group); f != "" {
		procsFiles = append(procsFiles, f)
	}
	return procsFiles, dir
}

// Stats reads the job's counters. Call it after the job's processes have
// ended and before Remove.
func (j *Job) Stats() jobs.QoSStats {
	s, oom := j.m.d.stats(j.rel)
	s.Group = j.group
	gs, gp := j.m.d.throttled(j.grel)
	s.GroupThrottledSeconds, s.GroupThrottledPeriods = max(gs-j.groupSeconds, 0), max(gp-j.groupPeriods, 0)
	s.MemoryLimit = j.memory
	s.OOMKilled = oom > 0
	return s
}

// MemoryKill is the failure message of a job the kernel killed for its
// memory limit, or "" if it was not.
func (j *Job) MemoryKill() string {
	if _, oom := j.m.d.stats(j.rel); oom == 0 {
		return ""
	}
	if j.memory > 0 {
		return fmt.Sprintf("killed: memory limit %s reached", j.memory)
	}
	return "killed: memory limit reached"
}

// Kill ends every process in the job's cgroup: whatever of its tree the
// supervisor missed (v2 cgroup.kill, v1 freeze and kill).
func (j *Job) Kill() error { return j.m.d.kill(j.rel) }

// Remove kills what is left and removes the cgroup. Killed processes take
// a moment to leave it, so the removal is retried briefly.
func (j *Job) Remove() error {
	var err error
	for i := range 50 {
		if len(j.m.d.pids(j.rel)) > 0 {
			_ = j.Kill()
		}
		if err = j.m.d.remove(j.rel); err == nil {
			return nil
		}
		// Real time: the kernel empties the cgroup on its own clock.
		time.Sleep(time.Duration(i+1) * time.Millisecond)
	}
	return fmt.Errorf("isolation: remove %s: %w", j.rel, err)
}

// OpenDir opens the job's v2 cgroup for SysProcAttr.CgroupFD.
func OpenDir(dir string) (*os.File, error) { return os.Open(dir) }
