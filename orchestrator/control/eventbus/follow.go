package eventbus

import (
	"github.com/ballastdev/ballast/orchestrator/model/events"

	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Follow returns one job's stored history followed by its live events, each
// event once, on a channel closed when ctx ends or the connection closes.
// This is what `ballast jobs watch` shows.
//
// It subscribes before reading the history, so an event published in
// between is not lost, and drops by ID what the history already held (and
// republished duplicates).
func Follow(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, stream string, subj events.Subjects, jobID string) (<-chan events.Event, error) {
	ctx, cancel := context.WithCancel(ctx)
	live, err := Watch(ctx, nc, subj, jobID)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("eventbus.Follow: %w", err)
	}
	past, err := History(ctx, js, stream, subj, jobID)
	if err != nil {
		cancel() // ends Watch's goroutine
		return nil, fmt.Errorf("eventbus.Follow: %w", err)
	}
	out := make(chan events.Event, 16)
	go func() {
		defer close(out)
		defer cancel()
		seen := make(map[string]bool, len(past))
		send := func(e events.Event) bool {
			if seen[e.ID] {
				return true
			}
			seen[e.ID] = true
			select {
			case out <- e:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for _, e := range past {
			if !send(e) {
				return
			}
		}
		for e := range live {
			if !send(e) {
				return
			}
		}
	}()
	return out, nil
}
