package controller

import (
	"context"
	"strconv"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/queues"
)

// checkEpoch looks at the namespace's epoch (queues.EpochWatch) and says
// when Redis lost its data. Every controller runs it every tick, leading or
// not: the lease lives in the same Redis, so after a loss any controller
// may lead next, and one that never looked could not tell the loss from a
// first start. That was why a standby that took the lease after Redis came
// back empty said the data went "before this controller started": only the
// leader used to look, so the standby had no memory of the marker. It
// returns the unacknowledged loss record (nil: none).
func (c *Controller) checkEpoch(ctx context.Context, now time.Time, lead bool) *queues.DataLoss {
	v, err := c.epoch.Check(ctx)
	if err != nil {
		c.log.Warn("checking the namespace's epoch failed; retrying next tick", "err", err)
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.loss
	}
	if v.Found != "" {
		c.logLoss(ctx, *v.Loss, lead)
	}
	if v.Created && v.Fresh && v.Found == "" && c.opts.PriorEvents != nil {
		// No epoch and no older marker: a first start, or data that went
		// while no controller watched. The event stream, kept by NATS
		// apart from Redis, tells them apart.
		if l := c.lossBeforeStart(ctx, now, v.Epoch); l != nil {
			v.Loss = l
		}
	}
	c.mu.Lock()
	c.loss = v.Loss
	announce := v.Loss != nil && !v.Loss.At.Equal(c.announced)
	if announce {
		c.announced = v.Loss.At
	}
	c.mu.Unlock()
	if announce {
		c.publish(lossEvent(*v.Loss))
	}
	if c.opts.OnDataLoss != nil {
		c.opts.OnDataLoss(v.Loss)
	}
	return v.Loss
}

// logLoss says, once per controller, that Redis lost its data.
func (c *Controller) logLoss(ctx context.Context, l queues.DataLoss, lead bool) {
	attrs := []any{"namespace", c.store.Namespace().Name(), "reason", l.Reason, "last_seen", l.LastSeen, "noticed_by", l.By,
		"leader", lead, "fix", queues.LossFix}
	if jobsLeft, outboxLeft, err := c.store.Holdings(ctx); err == nil {
		attrs = append(attrs, "job_records_left", jobsLeft, "outbox_left", outboxLeft)
	}
	c.log.Error(l.Message(), attrs...)
}

// lossBeforeStart asks the event stream whether jobs ran in this namespace
// before; if so, the data went while no controller watched, and the loss
// is recorded with the last event's time as when it was last seen.
func (c *Controller) lossBeforeStart(ctx context.Context, now time.Time, epoch queues.Epoch) *queues.DataLoss {
	n, last, err := c.opts.PriorEvents(ctx)
	if err != nil {
		c.log.Warn("cannot read the event stream to tell a first start from a Redis that lost its data", "err", err)
		return nil
	}
	if n == 0 || c.firstStartRaced(ctx, n) {
		return nil
	}
	l := queues.DataLoss{At: now.UTC().Truncate(time.Millisecond), LastSeen: last.UTC().Truncate(time.Millisecond), Reason: queues.LossBeforeStart,
		Detail: "Redis has no record of this namespace, but the event stream holds " + strconv.FormatUint(n, 10) +
			" events: Redis lost its data before this controller started (if it was reset on purpose, run `ballast recover --ack`)",
		NewEpoch: epoch.ID, By: "controller " + c.opts.ID}
	if _, err := c.store.RecordDataLoss(ctx, l); err != nil {
		c.log.Warn("recording the loss of Redis data failed; retrying next tick", "err", err)
	}
	c.log.Error(l.Message(), "namespace", c.store.Namespace().Name(), "stream_events", n, "last_event", last, "fix", queues.LossFix)
	return &l
}

// firstStartRaced reports whether the n events the stream holds began
// with data Redis still has: the oldest event about a job names a job
// Redis holds, or no event names a job at all. Intake accepts work
// before a new controller's first tick writes the namespace marker, and
// that work's events must not read as a loss. Any doubt (an error, a
// job Redis does not have) leaves the loss to be reported.
func (c *Controller) firstStartRaced(ctx context.Context, n uint64) bool {
	if c.opts.FirstJobEvent == nil {
		return false
	}
	id, ok, err := c.opts.FirstJobEvent(ctx)
	if err != nil {
		c.log.Warn("cannot read the event stream's first job event; reporting its history as a loss", "err", err)
		return false
	}
	if !ok {
		c.log.Info("first start: the event stream holds no event about a job", "stream_events", n)
		return true
	}
	if _, err := c.store.Get(ctx, id); err != nil {
		return false
	}
	c.log.Info("first start: work was accepted before this controller's first tick", "stream_events", n, "oldest_job", id)
	return true
}

// lossEvent is the event announcing l. Its ID comes from the record, so
// every controller that sees the same loss publishes one stored event.
func lossEvent(l queues.DataLoss) events.Event {
	return events.Event{ID: "data_lost." + strconv.FormatInt(l.At.UnixMilli(), 10), Type: events.TypeRedisDataLost, Time: l.At,
		Reason: l.Message(), Data: events.DataLost{Reason: l.Reason, At: l.At, LastSeen: l.LastSeen,
			OldEpoch: l.OldEpoch, NewEpoch: l.NewEpoch, DetectedBy: l.By}.Data()}
}

// recoverLost runs the configured recovery while a loss record stands
// (leader only; the record is removed when recovery completes), once the
// record is RecoverSettle old. The wait is not spent in the tick: the
// tick goes on, and a later one recovers.
func (c *Controller) recoverLost(ctx context.Context, now time.Time, loss *queues.DataLoss) {
	if loss == nil || c.opts.RecoverLost == nil || loss.At.Equal(c.recoveredFor) || now.Sub(loss.At) < c.opts.RecoverSettle {
		return
	}
	if err := c.opts.RecoverLost(ctx); err != nil {
		c.log.Warn("rebuilding the jobs Redis lost failed; retrying next tick", "err", err)
		return
	}
	// Once per loss: a recovery that left the record (jobs it could not
	// rebuild) said so, and reading the whole stream again each tick
	// would change nothing.
	c.recoveredFor = loss.At
}

// DataLoss returns the unacknowledged loss record this controller saw at
// its last tick (nil: none).
func (c *Controller) DataLoss() *queues.DataLoss {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loss
}
