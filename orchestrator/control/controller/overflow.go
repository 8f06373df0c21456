package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
)

// overflowed is where rule 7 sent one job: the pool it sized for the job and
// the attempt the move created.
type overflowed struct {
	pool    string
	attempt int
}

// overflow carries out rule 7: the queued core job moves, fenced by the
// attempt it was planned for, to the overflow queue of its pinned region (or
// the plain one), which on-demand workers read first and spot and fixed
// workers never read. The move is published as job.overflowed, which the
// metrics count.
func (h *Hybrid) overflow(ctx context.Context, a policy.Action, now time.Time) error {
	h.mu.Lock()
	j, ok := h.seen[a.Job]
	h.mu.Unlock()
	if !ok {
		return nil // gone since the snapshot; the next tick plans again
	}
	to := queues.RegionalQueue(queues.QueueOverflow, j.Spec.Labels[RegionLabel])
	reason := fmt.Sprintf("overflow to %s (rule %d: %s)", a.Pool, a.Rule, a.Reason)
	attempt, err := h.Store.Move(ctx, a.Job, j.Attempt, to, reason)
	if attempt == 0 {
		// Stale (the job started, moved or ended meanwhile) or refused.
		return err
	}
	h.mu.Lock()
	h.overflowTo[a.Job] = overflowed{pool: a.Pool, attempt: attempt}
	h.mu.Unlock()
	// A failed enqueue is recorded and the outbox finishes it: the job has
	// overflowed either way.
	publish(h.Events, h.Logger, events.Overflow{JobID: a.Job, Attempt: attempt, Queue: string(to), Pool: a.Pool,
		Waited: now.Sub(j.QueuedAt), Reason: reason, Time: now}.Event())
	return err
}

// overflowPool is the on-demand pool a queued overflowed job counts against
// in the snapshot: the one rule 7 chose, while this controller remembers the
// move; after a restart (or a move by another leader) the cheapest on-demand
// pool the job may run in, which is where rule 7 sends work when no pool has
// a worker with a free slot: one whose machines hold the job's shape (pj,
// the policy's record of it), in the policy's order of pools. It only
// restates placement for the demand count: any on-demand worker of the
// job's region may take the job. "" when no on-demand pool fits; the
// policy then counts it nowhere.
func (h *Hybrid) overflowPool(j jobs.Job, pj *policy.Job) string {
	if o, ok := h.overflowTo[j.ID]; ok && o.attempt == j.Attempt {
		return o.pool
	}
	region := j.Spec.Labels[RegionLabel]
	var best *policy.Pool
	for i := range h.Pools {
		p := &h.Pools[i]
		if p.Kind != policy.PoolOnDemand || (region != "" && p.Region != region) || !policy.PoolHolds(p, pj) {
			continue
		}
		if best == nil || policy.ComparePools(p, best) < 0 {
			best = p
		}
	}
	if best == nil {
		return ""
	}
	return best.Name
}
