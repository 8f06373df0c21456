package controller

import (
	"context"
	"log/slog"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// publishTimeout bounds one event publish: events are history, not the
// truth, so a slow bus must not hold up the loop that changed a record.
const publishTimeout = 2 * time.Second

// publish sends e on pub, logging (never returning) a failure. A nil pub or
// log is allowed: callers without a bus (the CLI) pass nil.
func publish(pub events.Publisher, log *slog.Logger, e events.Event) {
	if pub == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	publishIn(ctx, pub, log, e)
}

// publishIn is publish within ctx, for a run of events that share one
// bound: a timer per event is a good part of announcing a batch.
func publishIn(ctx context.Context, pub events.Publisher, log *slog.Logger, e events.Event) {
	if pub == nil {
		return
	}
	if err := pub.Publish(ctx, e); err != nil && log != nil {
		log.Warn("event not published", "type", e.Type, "job", e.JobID, "err", err)
	}
}
