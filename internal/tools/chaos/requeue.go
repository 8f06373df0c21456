package chaos

import (
	"context"
	"sort"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// attemptKey names one attempt of one job.
type attemptKey struct {
	job     string
	attempt int
}

// runningOn returns the attempts running on worker w, from the job records.
// A nil w means every worker.
func runningOn(ctx context.Context, store *queues.Store, w *workerProc) (map[attemptKey]bool, error) {
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	active, err := store.ActiveJobs(cctx)
	if err != nil {
		return nil, err
	}
	out := map[attemptKey]bool{}
	for _, j := range active {
		if j.State == jobs.StateRunning && (w == nil || w.owns(j.Worker)) {
			out[attemptKey{j.ID, j.Attempt}] = true
		}
	}
	return out, nil
}

// requeueTimes waits until every attempt in running has moved on, and
// returns, for each, the time from killed to its requeue: the record's
// queued time when the next attempt is the one requeued, else when the
// move was seen. An attempt that ended by itself (it finished before the
// kill) is not counted. pending lists the jobs still not requeued after
// within.
func requeueTimes(ctx context.Context, store *queues.Store, running map[attemptKey]bool, killed time.Time, within time.Duration) (times []time.Duration, pending []string) {
	left := make(map[attemptKey]bool, len(running))
	for k := range running {
		left[k] = true
	}
	deadline := killed.Add(within)
	for len(left) > 0 {
		for k := range left {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			j, err := store.Get(cctx, k.job)
			cancel()
			switch {
			case err != nil:
			case j.Attempt == k.attempt && j.State.Terminal():
				delete(left, k) // it ended on its own before the kill
			case j.Attempt > k.attempt:
				at := time.Now()
				if j.Attempt == k.attempt+1 && !j.QueuedAt.IsZero() {
					at = j.QueuedAt
				}
				// A move stamped before the kill is the job's own (a retry
				// of a failure), not a requeue of the kill.
				if !at.Before(killed.Truncate(time.Millisecond)) {
					times = append(times, at.Sub(killed))
				}
				delete(left, k)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) || !sleepUntil(ctx, time.Now().Add(25*time.Millisecond)) {
			break
		}
	}
	for k := range left {
		pending = append(pending, k.job)
	}
	sort.Strings(pending)
	return times, pending
}
