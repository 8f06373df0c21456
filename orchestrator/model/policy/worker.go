package policy

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// WorkerState is where a worker is in its life, as the registry sees it.
type WorkerState string

// The worker states.
const (
	// WorkerStarting: registered but not yet taking work. Counted as supply,
	// so a booting worker is not launched twice.
	WorkerStarting WorkerState = "starting"
	// WorkerUp: taking work from its queues.
	WorkerUp WorkerState = "up"
	// WorkerDraining: finishing what it runs and taking nothing new.
	WorkerDraining WorkerState = "draining"
)

// Worker is one registered worker.
type Worker struct {
	ID   string
	Pool string
	// Slots is how many slots the worker offers (one job of one slot
	// each, or fewer sized jobs).
	Slots int
	// Busy is how many slots are in use: held by running jobs, plus held
	// for placed jobs waiting for them to free.
	Busy  int
	State WorkerState
	// NoPlacedWork marks a worker that reads no place queue of its own
	// (an older worker, or one fenced under a new ID): work placed on it
	// never starts, so rule 8 places nothing there and takes back what
	// is placed there.
	NoPlacedWork bool
	// Labels are what the worker reports of itself (such as gpu_model);
	// a job's Requires must all match them.
	Labels map[string]string
	// CPUs and Memory (bytes) are the worker's capacity for sized jobs
	// that account them; 0 means not accounted.
	CPUs   float64
	Memory int64
	// SharedGPUs is, on a GPU worker, what running shares use of each GPU
	// they are on, in thousandths (1 to 999 leaves room); nil when the
	// worker does not say. Rules 3 and 5 count the room beside shares
	// from it while it agrees with the job records, else from their sum
	// (see appendGaps).
	SharedGPUs []int
	// StartedAt is when billing started; rule 5 releases relative to it.
	StartedAt time.Time
	// LaunchRequestedAt is when the controller asked for the worker; it
	// stands in for StartedAt when that is unknown.
	LaunchRequestedAt time.Time
	// IdleSince is when the worker last became empty; zero while busy. A
	// worker that is empty but has a zero IdleSince is not released, because
	// how long it has been idle is unknown.
	IdleSince time.Time
}

// billingStart is the best known start of billing.
func (w *Worker) billingStart() time.Time {
	if !w.StartedAt.IsZero() {
		return w.StartedAt
	}
	return w.LaunchRequestedAt
}

// active reports whether the worker is, or will be, taking work.
func (w *Worker) active() bool { return w.State == WorkerUp || w.State == WorkerStarting }

// carries reports whether the worker has every label the job requires
// (one of the values a requirement lists): its own, or else its pool's
// (pool may be nil).
func (w *Worker) carries(req map[string]string, pool *Pool) bool {
	for k, v := range req {
		got, ok := w.Labels[k]
		if !ok && pool != nil {
			got, ok = pool.Labels[k]
		}
		if !ok || !jobs.Accepts(v, got) {
			return false
		}
	}
	return true
}
