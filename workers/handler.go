package workers

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/ballastdev/ballast/workers/gpu"
)

// Handler runs a job in-process. It should return when ctx is cancelled
// (cancel, timeout or drain); after the grace period the worker stops
// waiting for it.
type Handler func(ctx context.Context, r *Run) error

// Run is what an in-process handler sees of its job.
type Run struct {
	JobID   string
	Attempt int
	// Params are the job's normalised parameters.
	Params map[string]any
	// ResumeFrom is the last checkpoint ("" on a fresh start).
	ResumeFrom string
	// CheckpointDir is a directory for this job's checkpoints on this
	// machine. It is not created for handlers (most never use it): create it
	// before writing. It is removed when the job ends on this worker.
	CheckpointDir string
	// GPUs are the devices granted to the attempt on a GPU worker (nil
	// elsewhere). A handler runs in the worker's process, which sees every
	// GPU: using only these is up to it.
	GPUs []gpu.Device
	// Replica, Replicas and Coordinator place a gang's member (replicas
	// above 1) in its gang, as BALLAST_REPLICA, BALLAST_REPLICAS and
	// BALLAST_COORDINATOR do for a process; zero for other jobs.
	Replica, Replicas int
	Coordinator       string
	// Output receives the handler's log lines (kept like a process's stdout).
	Output     io.Writer
	checkpoint func(string) error
	metric     func(float64) error
}

// Checkpoint records a checkpoint the next attempt resumes from.
func (r *Run) Checkpoint(c string) error {
	if r.checkpoint == nil {
		return fmt.Errorf("workers.Run.Checkpoint: not running under a worker")
	}
	return r.checkpoint(c)
}

// ReportMetric records a value of the job's metric (what a process reports
// by printing {"<metric>": v}). A value Redis could not take is logged by the
// worker, not returned: a Redis blip must not fail the job.
func (r *Run) ReportMetric(v float64) error {
	if r.metric == nil {
		return fmt.Errorf("workers.Run.ReportMetric: not running under a worker")
	}
	// Refused here, not only by the store, so the handler learns of its
	// bug instead of the value vanishing into a warning.
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("workers.Run.ReportMetric: %v is not a finite number", v)
	}
	return r.metric(v)
}
