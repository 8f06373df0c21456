package eventbus

import (
	"github.com/ballastdev/ballast/orchestrator/model/events"

	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
)

// subscribeTimeout bounds the round trip that confirms a subscription.
const subscribeTimeout = 5 * time.Second

// Watch follows one job's events live, from now on. The channel is closed
// when ctx ends or the connection closes. Watch returns only once the server
// has registered the subscription, so an event published after Watch returns
// is seen.
//
// Watch sees core NATS traffic, not the stream: a republished event arrives
// twice, and events published before the call are not replayed. Follow adds
// the history and drops duplicates. Messages that are not events are logged
// and skipped.
func Watch(ctx context.Context, nc *nats.Conn, subj events.Subjects, jobID string) (<-chan events.Event, error) {
	if nc == nil {
		return nil, fmt.Errorf("eventbus.Watch: no NATS connection")
	}
	if err := events.CheckToken(jobID); err != nil {
		return nil, fmt.Errorf("eventbus.Watch: job id %q: %w", jobID, err)
	}
	subject := subj.Job(jobID)
	// A synchronous subscription keeps messages in nats.go's pending buffer
	// while the reader is busy, instead of blocking the connection's reader.
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		return nil, fmt.Errorf("eventbus.Watch: subscribing to %s: %w", subject, err)
	}
	fctx, cancel := context.WithTimeout(ctx, subscribeTimeout)
	err = nc.FlushWithContext(fctx)
	cancel()
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("eventbus.Watch: confirming subscription to %s: %w", subject, err)
	}
	out := make(chan events.Event, 16)
	go func() {
		defer close(out)
		defer func() { _ = sub.Unsubscribe() }() // fails harmlessly once the connection is closed
		for {
			m, err := sub.NextMsgWithContext(ctx)
			if err != nil {
				return // ctx ended or the connection closed
			}
			e, err := events.Decode(m.Data)
			if err != nil {
				slog.Default().Warn("eventbus.Watch: skipping a message that is not an event", "subject", m.Subject, "error", err)
				continue
			}
			select {
			case out <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
