package chaos

import (
	"context"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/queues"
)

// A delivery asynq has handed to a worker that the worker has not yet
// claimed (the claim script that marks the record running) belongs to no
// worker in Ballast's records. If that worker dies in between, Ballast's
// dead-worker recovery, which requeues the attempts a worker claimed, does
// not see it: the job waits for asynq's own lease on the task to run out.
// The run looks for such deliveries after each kill, so that their wait is
// reported beside the requeue times rather than hidden in the backlog.

// unclaimed returns the attempts whose asynq task is active while the job
// record still says queued at that attempt, in the queues fixed workers
// read. A live worker claims within milliseconds of taking a task, so an
// attempt found in two reads apart is held by a dead or frozen worker.
func unclaimed(ctx context.Context, store *queues.Store, insp *asynq.Inspector, apart time.Duration) map[attemptKey]bool {
	first := activeUnclaimed(ctx, store, insp)
	if len(first) == 0 || !sleepUntil(ctx, time.Now().Add(apart)) {
		return nil
	}
	held := map[attemptKey]bool{}
	for k := range activeUnclaimed(ctx, store, insp) {
		if first[k] {
			held[k] = true
		}
	}
	return held
}

func activeUnclaimed(ctx context.Context, store *queues.Store, insp *asynq.Inspector) map[attemptKey]bool {
	out := map[attemptKey]bool{}
	for _, q := range []queues.Queue{queues.QueueCore, queues.QueueLoan} {
		tasks, err := insp.ListActiveTasks(store.Namespace().AsynqQueue(q), asynq.PageSize(1000))
		if err != nil {
			continue // no such queue yet, or Redis trouble: nothing to learn
		}
		for _, t := range tasks {
			d, err := queues.DecodeDelivery(t.Payload)
			if err != nil {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			j, err := store.Get(cctx, d.JobID)
			cancel()
			if err == nil && j.State == jobs.StateQueued && j.Attempt == d.Attempt {
				out[attemptKey{d.JobID, d.Attempt}] = true
			}
		}
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
