package eventbus

import (
	"github.com/ballastdev/ballast/orchestrator/model/events"

	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"
)

// History reads one job's stored events, oldest first. It reads up to the
// last event stored when it is called and then stops, so it returns even
// while the job is still publishing. A job without stored events (unknown,
// or older than the stream's max age) has an empty history.
func History(ctx context.Context, js jetstream.JetStream, stream string, subj events.Subjects, jobID string) ([]events.Event, error) {
	if js == nil {
		return nil, fmt.Errorf("eventbus.History: no JetStream context")
	}
	if err := events.CheckToken(jobID); err != nil {
		return nil, fmt.Errorf("eventbus.History: job id %q: %w", jobID, err)
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("eventbus.History: stream %q does not exist (the controller creates it at start-up: is one running?): %w", stream, err)
		}
		return nil, fmt.Errorf("eventbus.History: stream %q: %w", stream, err)
	}
	subject := subj.Job(jobID)
	// The last stored sequence marks "caught up": without it a reader cannot
	// tell the end of the history from a pause between events.
	last, err := s.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return []events.Event{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("eventbus.History: last event on %s: %w", subject, err)
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("eventbus.History: consumer on %s: %w", subject, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("eventbus.History: reading %s: %w", subject, err)
	}
	defer it.Stop()

	var out []events.Event
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("eventbus.History: reading %s after %d events: %w", subject, len(out), err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return nil, fmt.Errorf("eventbus.History: reading %s: %w", subject, err)
		}
		if e, err := events.Decode(m.Data()); err != nil {
			slog.Default().Warn("eventbus.History: skipping a message that is not an event",
				"subject", subject, "sequence", meta.Sequence.Stream, "error", err)
		} else {
			out = append(out, e)
		}
		// Age limits may remove the last message while we read; anything
		// at or past its sequence still means caught up.
		if meta.Sequence.Stream >= last.Sequence {
			return out, nil
		}
	}
}
