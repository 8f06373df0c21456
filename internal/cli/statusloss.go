package cli

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/queues"
)

// lossError is status's error while a loss of Redis data stands: status
// exits non-zero so that a script or a health check notices.
func lossError(l *queues.DataLoss) error {
	if l == nil {
		return nil
	}
	return errors.New(l.Message() + "; " + queues.LossFix)
}

// lossStreamTimeout bounds status's look at the event stream: a status
// without NATS still shows the rest.
const lossStreamTimeout = 2 * time.Second

// lossSeenInStream covers a loss no long-lived process has recorded yet
// (no controller ran since Redis came back empty): the namespace has
// neither an epoch nor the older start marker, which a first start shows
// too, but the event stream, kept apart from Redis, holds job events.
// Unreachable NATS is not an error here: status says what it can.
func lossSeenInStream(ctx context.Context, cfg config.Config, store *queues.Store) *queues.DataLoss {
	if started, err := store.Started(ctx); err != nil || !started.IsZero() {
		return nil // an install from before epochs: not a loss
	}
	nc, err := connectNATS(cfg, "ballast-status")
	if err != nil {
		return nil
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, lossStreamTimeout)
	defer cancel()
	n, last, err := eventbus.Stored(sctx, js, cfg.NATS.Stream)
	if err != nil || n == 0 {
		return nil
	}
	return &queues.DataLoss{At: time.Now().UTC().Truncate(time.Second), LastSeen: last, Reason: queues.LossBeforeStart, By: "status",
		Detail: "Redis has no record of this namespace, but the event stream holds events: Redis lost its data while no controller ran"}
}
