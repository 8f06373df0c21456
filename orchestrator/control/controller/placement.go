package controller

import (
	"context"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
)

// size copies a job's size, and where it is placed, into the policy's
// view. A queued job placed on a worker that no longer takes placed work
// is shown as placed: rule 8 decides to take it back (policy.Unplace),
// and unplace carries that out.
func size(pj *policy.Job, j jobs.Job) {
	z := j.Spec.Size
	pj.Slots, pj.Replicas, pj.CPUs, pj.Memory = z.Slots, z.Replicas, z.CPUs, int64(z.Memory)
	pj.Requires = z.Requires
	pj.Share = z.ShareMilli()
	if len(j.Placed) == 0 {
		return
	}
	pj.Placed = append([]string(nil), j.Placed...)
	pj.PlacedAt = j.PlacedAt
}

// unplace carries out an Unplace action: the job waits for placement
// again as a new attempt, and the delivery held on the old workers is
// stale. The move is fenced on the attempt the plan saw, so a job that
// started meanwhile is left alone; one that fails is planned again next
// tick.
func (h *Hybrid) unplace(ctx context.Context, a policy.Action) error {
	h.mu.Lock()
	j, ok := h.seen[a.Job]
	h.mu.Unlock()
	if !ok {
		return nil
	}
	n, err := h.Store.Move(ctx, a.Job, h.attempt(a.Job), queues.Queue(j.Queue), a.Reason)
	if err != nil {
		// Not the tick's failure: the plan holds the take-back again
		// next tick until it lands.
		h.Logger.Warn("placement not taken back; the next tick tries again", "job", a.Job, "err", err)
		return nil
	}
	if n == 0 {
		h.Logger.Debug("placement not taken back: the job moved on since the snapshot", "job", a.Job)
		return nil
	}
	h.Logger.Info("placement taken back", "job", a.Job, "reason", a.Reason)
	return nil
}

// place carries out a Place action: the job's members go to the named
// workers' own queues, fenced on the attempt the plan saw. A job the
// snapshot showed placed already is a reservation that moves.
func (h *Hybrid) place(ctx context.Context, a policy.Action) error {
	h.mu.Lock()
	moves := len(h.seen[a.Job].Placed) > 0
	h.mu.Unlock()
	put := h.Store.Place
	if moves {
		put = h.Store.MovePlacement
	}
	n, err := put(ctx, a.Job, h.attempt(a.Job), a.Workers)
	if err != nil {
		return err
	}
	if n == 0 {
		h.Logger.Debug("placement skipped: the job moved on since the snapshot", "job", a.Job)
	}
	return nil
}
