package eventbus

import (
	"github.com/ballastdev/ballast/orchestrator/model/events"

	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DuplicateWindow is how long the stream remembers event IDs to drop
// republished events. It covers a publisher's retries, not a replay of old
// history.
const DuplicateWindow = 2 * time.Minute

// EnsureStream creates the event stream, or updates it to this
// configuration: file storage, subjects subj.All(), the duplicate window, and
// events kept for maxAge (0 keeps them until removed by hand). It is
// idempotent, so every controller calls it at start-up. The server refuses a
// duplicate window longer than maxAge, so a shorter maxAge shortens the
// window too.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name string, subj events.Subjects, maxAge time.Duration) error {
	return EnsureReplicatedStream(ctx, js, name, subj, maxAge, 1)
}

// EnsureReplicatedStream is EnsureStream with the stream kept on replicas
// servers of a NATS cluster (1, 3 or 5): with 3, the loss of one server
// loses no stored event and the stream keeps taking new ones. Raising the
// replicas of an existing stream is an update the server carries out.
func EnsureReplicatedStream(ctx context.Context, js jetstream.JetStream, name string, subj events.Subjects, maxAge time.Duration, replicas int) error {
	if replicas != 1 && replicas != 3 && replicas != 5 {
		return fmt.Errorf("eventbus.EnsureStream: %d replicas: use 1, 3 or 5 (an odd count keeps a majority when one fails)", replicas)
	}
	if js == nil {
		return fmt.Errorf("eventbus.EnsureStream: no JetStream context")
	}
	if err := subj.Validate(); err != nil {
		return fmt.Errorf("eventbus.EnsureStream: %w", err)
	}
	if maxAge < 0 {
		return fmt.Errorf("eventbus.EnsureStream: maxAge %s is negative (use 0 to keep events until removed)", maxAge)
	}
	dup := DuplicateWindow
	if maxAge > 0 && maxAge < dup {
		dup = maxAge
	}
	cfg := jetstream.StreamConfig{
		Name:        name,
		Description: "Ballast job and worker events",
		Subjects:    []string{subj.All()},
		Storage:     jetstream.FileStorage,
		Duplicates:  dup,
		MaxAge:      maxAge,
		Replicas:    replicas,
	}
	if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
		hint := ""
		if replicas > 1 {
			hint = fmt.Sprintf(" (%d replicas need a NATS cluster of at least %d JetStream servers)", replicas, replicas)
		}
		return fmt.Errorf("eventbus.EnsureStream: stream %q on %s: %w%s", name, subj.All(), err, hint)
	}
	return nil
}

// Stored says how many events the stream holds and when the last was
// stored (zero when none).
func Stored(ctx context.Context, js jetstream.JetStream, name string) (uint64, time.Time, error) {
	st, err := js.Stream(ctx, name)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("eventbus.Stored: stream %q: %w", name, err)
	}
	info := st.CachedInfo()
	return info.State.Msgs, info.State.LastTime, nil
}

// FirstJobEvent returns the oldest event in the stream that names a job,
// reading at most limit events from the stream's start; ok is false when
// none of them does. A controller that starts on a Redis without the
// namespace marker asks it: if Redis holds that job, the stream's history
// began with the data Redis still has (a submission reached intake before
// the controller's first tick), and nothing was lost.
func FirstJobEvent(ctx context.Context, js jetstream.JetStream, name string, limit int) (e events.Event, ok bool, err error) {
	st, err := js.Stream(ctx, name)
	if err != nil {
		return events.Event{}, false, fmt.Errorf("eventbus.FirstJobEvent: stream %q: %w", name, err)
	}
	state := st.CachedInfo().State
	for seq := state.FirstSeq; seq <= state.LastSeq && seq < state.FirstSeq+uint64(limit); seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // removed from the middle of the stream
		}
		if err != nil {
			return events.Event{}, false, fmt.Errorf("eventbus.FirstJobEvent: stream %q message %d: %w", name, seq, err)
		}
		if e, err := events.Decode(m.Data); err == nil && e.JobID != "" {
			return e, true, nil
		}
	}
	return events.Event{}, false, nil
}
