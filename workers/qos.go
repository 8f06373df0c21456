package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers/isolation"
)

// cgroupJoin is how a job's supervisor enters its cgroup (see jobCommand):
// v1 cgroup.procs files, or an open v2 cgroup directory.
type cgroupJoin struct {
	procs []string
	fd    *os.File
}

// openIsolation opens the worker's cgroups and logs what is in force.
func (w *Worker) openIsolation() error {
	m, err := isolation.Open(isolation.Options{Mode: w.opts.Isolation, Root: w.opts.CgroupRoot,
		WorkerID: w.ID(), QoS: w.opts.QoS, Logger: w.log})
	if err != nil {
		return err
	}
	w.iso = m
	r := m.Report()
	in, out := r.InForce()
	w.log.Info("QoS isolation", "requested", r.Requested, "mode", r.Mode, "reason", r.Reason, "limits_in_force", in, "limits_not_in_force", out)
	for _, l := range r.Limits {
		if l.InForce {
			w.log.Info("QoS limit in force", "group", l.Group, "limit", l.Limit, "value", l.Value)
		}
	}
	return nil
}

// fixed reports whether this worker serves fixed quota: only fixed
// workers read the loan queue, so a burst job here is lent.
func (w *Worker) fixed() bool { return slices.Contains(w.opts.Queues, queues.QueueLoan) }

// jobCgroup makes the attempt's cgroup in its QoS group. A nil cgroup with
// a nil error means the job runs without one (isolation off).
func (w *Worker) jobCgroup(r *running) (*isolation.Job, cgroupJoin, error) {
	if w.iso == nil {
		return nil, cgroupJoin{}, nil
	}
	group := w.opts.QoS.Group(r.job.Spec, w.fixed())
	cg, err := w.iso.Job(group, queues.TaskID(r.job.ID, r.job.Attempt), r.job.Spec.Limits)
	if err != nil || cg == nil {
		return nil, cgroupJoin{}, err
	}
	procs, dir := cg.Join()
	join := cgroupJoin{procs: procs}
	if dir != "" {
		f, err := isolation.OpenDir(dir)
		if err != nil {
			_ = cg.Remove()
			return nil, cgroupJoin{}, fmt.Errorf("open the job's cgroup: %w", err)
		}
		join.fd = f
	}
	return cg, join, nil
}

// endCgroup reads the attempt's counters, names a memory-limit kill as
// such, records the counters in the job record and removes the cgroup.
func (w *Worker) endCgroup(r *running, cg *isolation.Job, cmd *exec.Cmd, res *outcome) {
	// Whatever the supervisor left behind ends with the attempt.
	_ = cg.Kill()
	st := cg.Stats()
	if st.IOSource == "process" && cmd.ProcessState != nil {
		// v1: the job shares its group's blkio cgroup. The kernel's block
		// IO accounting of the supervisor and every descendant it reaped
		// is the job's own, in 512-byte blocks.
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			st.ReadBytes, st.WriteBytes = ru.Inblock*512, ru.Oublock*512
		}
	}
	if !res.succeeded() && res.stop == "" {
		if msg := cg.MemoryKill(); msg != "" {
			res.err = errors.New(msg)
		}
	}
	if err := cg.Remove(); err != nil {
		w.log.Warn("job cgroup not removed", "job", r.job.ID, "err", err)
	}
	r.setStats(st)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A gang's record holds member 0's counters; the others are logged.
	if !r.peer() {
		if ok, err := w.attempts.RecordQoS(ctx, r.job, r.worker, st); err != nil || !ok {
			w.log.Warn("QoS counters not recorded", "job", r.job.ID, "attempt", r.job.Attempt, "fenced", !ok, "err", err)
		}
	}
	w.log.Info("job QoS counters", "job", r.job.ID, "attempt", r.job.Attempt, "group", st.Group,
		"cpu_seconds", st.CPUSeconds, "cpu_throttled_seconds", st.ThrottledSeconds, "io_read_bytes", st.ReadBytes,
		"io_write_bytes", st.WriteBytes, "peak_memory", int64(st.PeakMemory), "oom_killed", st.OOMKilled)
}

// Isolation is the QoS isolation in force, as reported to the registry
// (nil before Start).
func (w *Worker) Isolation() *queues.Isolation { return w.isolationReport() }

// qosData is the attempt's cgroup counters in their JSON form, which is
// what a consumer of the bus decodes either way; nil when none were
// measured.
func qosData(r *running) map[string]any {
	st := r.qosStats()
	if st == nil {
		return nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}
