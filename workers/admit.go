package workers

import (
	"context"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// admit waits until the worker has the slots delivery d needs, gives them
// to key (see slotBook) and returns how many. It returns (0, nil) for a
// placed delivery that stopped being worth waiting for, and an error asynq acts on when
// the worker stops meanwhile (asynq then hands the same attempt on) or the
// job cannot fit here at all.
func (w *Worker) admit(ctx context.Context, d queues.Delivery, key string) (int, error) {
	var slots int
	var err error
	if d.Slots == 0 {
		slots, err = w.slots.admitShared(ctx, key)
	} else {
		slots, err = w.slots.admitPlaced(ctx, key, d.Slots, queues.PlacedRecheck, func() bool { return w.stillPlaced(d) })
	}
	switch {
	case errors.Is(err, errBookClosed):
		return 0, fmt.Errorf("worker draining")
	case errors.Is(err, errTooLarge):
		// The controller never places such a job here; a placement made
		// for an earlier, larger incarnation of this ID can. Dropping the
		// delivery leaves the job placed on a worker that cannot run it
		// until the controller sees it waiting and places it again.
		w.log.Error("placed job is larger than this worker", "job", d.JobID, "attempt", d.Attempt, "slots", d.Slots, "have", w.opts.Slots)
		return 0, fmt.Errorf("%w: %s: %w", asynq.RevokeTask, key, err)
	case err != nil:
		return 0, err
	case slots == 0:
		return 0, fmt.Errorf("%w: %s: %w", asynq.RevokeTask, key, errStale)
	}
	return slots, nil
}

// stillPlaced reports whether the attempt of placed delivery d still waits
// to start: a placement taken back, a job cancelled or moved on, makes the
// delivery stale. A Redis error counts as still placed: the claim decides
// when the slots free.
func (w *Worker) stillPlaced(d queues.Delivery) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2e9)
	defer cancel()
	st, attempt, err := w.deliveries.AttemptState(ctx, d.JobID)
	if err != nil {
		return !errors.Is(err, jobs.ErrNotFound)
	}
	return st == jobs.StateQueued && attempt == d.Attempt
}
