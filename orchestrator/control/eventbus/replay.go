package eventbus

import (
	"github.com/ballastdev/ballast/orchestrator/model/events"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// replayBatch is how many events one fetch of Replay asks for.
const replayBatch = 500

// Replay calls fn with every job event the stream holds, oldest first, up
// to the last one stored when it is called, and returns how many it read.
// It is how a Redis that lost its data is rebuilt: the stream is the only
// other place that knows which jobs were accepted. A message that is not
// an event is skipped with a warning, as History does.
func Replay(ctx context.Context, js jetstream.JetStream, stream string, subj events.Subjects, fn func(events.Event)) (int, error) {
	if js == nil {
		return 0, fmt.Errorf("eventbus.Replay: no JetStream context")
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("eventbus.Replay: stream %q: %w", stream, err)
	}
	// A consumer of its own, unacknowledged: reading changes nothing for
	// anyone else, and the server drops it soon after this returns.
	cons, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubject:     subj.Job("*"),
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return 0, fmt.Errorf("eventbus.Replay: consumer on %s: %w", subj.Job("*"), err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = s.DeleteConsumer(dctx, cons.CachedInfo().Name)
	}()
	// The count pending at creation is the end: events stored after are
	// news of the rebuilt Redis, not history.
	left := cons.CachedInfo().NumPending
	read := 0
	for left > 0 {
		batch, err := cons.Fetch(int(min(left, replayBatch)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return read, fmt.Errorf("eventbus.Replay: fetching after %d events: %w", read, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			if left > 0 {
				left--
			}
			if e, err := events.Decode(m.Data()); err != nil {
				slog.Default().Warn("eventbus.Replay: skipping a message that is not an event", "subject", m.Subject(), "error", err)
			} else {
				read++
				fn(e)
			}
			if meta, err := m.Metadata(); err == nil && meta.NumPending == 0 {
				left = 0 // age limits removed some while we read
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return read, fmt.Errorf("eventbus.Replay: reading after %d events: %w", read, err)
		}
		if got == 0 {
			return read, fmt.Errorf("eventbus.Replay: the stream stopped answering with %d events left to read", left)
		}
	}
	return read, nil
}
