package chaos

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// A delivery asynq has handed to a worker that the worker has not yet
// claimed belongs to no worker in Ballast's records; the leader moves such
// attempts on after a grace (queues.Store.HeldDeliveries). The run notes
// them after each kill, so that their wait is reported beside the requeue
// times rather than hidden in the backlog.

// unclaimed returns the attempts held (taken, not claimed) in two reads
// apart: a live worker claims within milliseconds of taking a task, so
// one seen twice is held by a dead or frozen worker.
func unclaimed(ctx context.Context, store *queues.Store, apart time.Duration) map[attemptKey]bool {
	first := held(ctx, store)
	if len(first) == 0 || !sleepUntil(ctx, time.Now().Add(apart)) {
		return nil
	}
	both := map[attemptKey]bool{}
	for k := range held(ctx, store) {
		if first[k] {
			both[k] = true
		}
	}
	return both
}

// held is one read of the held attempts; Redis trouble reads as none.
func held(ctx context.Context, store *queues.Store) map[attemptKey]bool {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	hs, _ := store.HeldDeliveries(cctx)
	out := make(map[attemptKey]bool, len(hs))
	for _, h := range hs {
		out[attemptKey{h.JobID, h.Attempt}] = true
	}
	return out
}

// redelivered returns, for each held attempt, how long after killed its
// job started again, from the final records: the attempt's own start if it
// was the one that ran, else the next attempt's queued time. Held attempts
// that never ran again are in pending.
func redelivered(held map[attemptKey]bool, killed time.Time, records map[string]jobs.Job) (times []time.Duration, pending []string) {
	for k := range held {
		j, ok := records[k.job]
		switch {
		case !ok:
			pending = append(pending, k.job)
		case j.Attempt == k.attempt && !j.StartedAt.IsZero():
			times = append(times, j.StartedAt.Sub(killed))
		case j.Attempt == k.attempt+1 && !j.QueuedAt.IsZero():
			times = append(times, j.QueuedAt.Sub(killed))
		case j.Attempt > k.attempt+1:
			// Moved on more than once: the first move is not on record.
		default:
			pending = append(pending, k.job)
		}
	}
	return times, pending
}
