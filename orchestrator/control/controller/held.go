package controller

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// DefaultHeldGrace is how long an attempt may stay taken but unclaimed
// before the leader moves it on. A live worker claims within milliseconds
// of taking a task, and even a claim retried through a Redis blip is
// handed back to asynq (retry set, not active) rather than held; seconds of
// holding mean the worker died or froze in between.
const DefaultHeldGrace = 2 * time.Second

// moveHeld moves on the attempts whose task a worker took but never
// claimed, once seen held for the grace: dead-worker recovery requeues
// what a worker's record holds, and these are in no worker's record. The
// move is fenced on the attempt: a frozen worker that wakes and claims
// first keeps the job, one that claims after finds its delivery stale. The
// old task is left to asynq's lease, whose redelivery is dropped as stale.
// The job was admitted once, so the new attempt goes ahead of the jobs
// never taken (queues.Store.Readmit).
func (c *Controller) moveHeld(ctx context.Context, now time.Time) {
	held, err := c.store.HeldDeliveries(ctx)
	if err != nil {
		c.log.Warn("looking for deliveries held but not claimed failed", "err", err)
		return
	}
	seen := make(map[string]time.Time, len(held))
	for _, h := range held {
		first, ok := c.held[h.TaskID()]
		if !ok {
			first = now
		}
		seen[h.TaskID()] = first
		if now.Sub(first) < c.opts.HeldGrace {
			continue
		}
		reason := "its delivery was taken by a worker that never claimed it (the worker died or froze)"
		n, err := c.store.Readmit(ctx, h.JobID, h.Attempt, h.Queue, reason)
		if err != nil && n == 0 {
			c.log.Warn("moving a held delivery failed; retrying next tick", "job", h.JobID, "attempt", h.Attempt, "err", err)
			continue
		}
		delete(seen, h.TaskID())
		if n == 0 {
			continue // claimed or moved meanwhile
		}
		c.changed(h.JobID)
		c.log.Warn("moved on an attempt held but not claimed", "job", h.JobID, "attempt", h.Attempt, "new_attempt", n,
			"held_for", now.Sub(first).Round(time.Millisecond))
		c.publish(events.Event{ID: events.JobEventID(h.JobID, n, events.TypeJobRequeued), Type: events.TypeJobRequeued,
			JobID: h.JobID, Attempt: n, Runs: c.runsOf(h.JobID), State: jobs.StateQueued, Queue: string(h.Queue), Reason: reason,
			Time: time.Now()})
	}
	c.held = seen
}
