package controller

import (
	"context"
	"fmt"
	"strings"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/queues"
)

// orphan is a placement to take back: the job's attempt and its queue.
type orphan struct {
	job     string
	attempt int
	queue   queues.Queue
	workers []string
}

// size copies a job's size into the policy's view. A queued job placed on a
// worker that no longer takes placed work is shown unplaced (nothing is
// held for it there any more) and noted for Tick to take back; callers
// hold h.mu.
func (h *Hybrid) size(pj *policy.Job, j jobs.Job, placeable map[string]bool) {
	z := j.Spec.Size
	pj.Slots, pj.Replicas, pj.CPUs, pj.Memory = z.Slots, z.Replicas, z.CPUs, int64(z.Memory)
	pj.Requires = z.Requires
	pj.Share = z.ShareMilli()
	if len(j.Placed) == 0 {
		return
	}
	if j.State == jobs.StateQueued {
		for _, w := range j.Placed {
			if !placeable[w] {
				h.orphans = append(h.orphans, orphan{job: j.ID, attempt: j.Attempt, queue: queues.Queue(j.Queue), workers: j.Placed})
				return
			}
		}
	}
	pj.Placed = append([]string(nil), j.Placed...)
	pj.PlacedAt = j.PlacedAt
}

// unplaceOrphans takes back the placements the last snapshot found on
// workers that no longer take placed work: the job waits for placement
// again as a new attempt, and the delivery held on the old worker is stale.
// The move is fenced, so a job that started meanwhile is left alone.
func (h *Hybrid) unplaceOrphans(ctx context.Context) {
	h.mu.Lock()
	orphans := h.orphans
	h.orphans = nil
	h.mu.Unlock()
	for _, o := range orphans {
		h.Changed(o.job)
		reason := fmt.Sprintf("placed on %s, which takes no placed work now", strings.Join(o.workers, ","))
		if _, err := h.Store.Move(ctx, o.job, o.attempt, o.queue, reason); err != nil {
			h.Logger.Warn("placement not taken back; the next tick tries again", "job", o.job, "err", err)
			continue
		}
		h.Logger.Info("placement taken back", "job", o.job, "attempt", o.attempt, "reason", reason)
	}
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
