package eventbus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

const streamName = "BALLAST_EVENTS"

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

type env struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	subj events.Subjects
	pub  *eventbus.NATSPublisher
	// otherPub publishes from a second connection, as a worker would.
	otherPub *eventbus.NATSPublisher
}

// newEnv starts a NATS server with the event stream. A non-default prefix
// makes sure nothing silently relies on "ballast".
func newEnv(t *testing.T) env {
	t.Helper()
	ns := testenv.NATS(t)
	nc := testenv.NATSConn(t, ns)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	subj := events.Subjects{Prefix: "bt"}
	if err := eventbus.EnsureStream(ctxT(t), js, streamName, subj, time.Hour); err != nil {
		t.Fatal(err)
	}
	return env{nc: nc, js: js, subj: subj, pub: eventbus.NewNATSPublisher(nc, subj),
		otherPub: eventbus.NewNATSPublisher(testenv.NATSConn(t, ns), subj)}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func jobEvent(jobID string, n int, typ events.Type) events.Event {
	return events.Event{
		ID:      fmt.Sprintf("%s-%d", jobID, n),
		Type:    typ,
		JobID:   jobID,
		Attempt: 1,
		State:   jobs.StateRunning,
		Queue:   "burst",
		Worker:  "w1",
		Time:    t0.Add(time.Duration(n) * time.Second),
		Data:    map[string]any{"n": float64(n)},
	}
}

// waitStored waits until the stream holds n messages.
func (e env) waitStored(t *testing.T, n uint64) {
	t.Helper()
	s, err := e.js.Stream(ctxT(t), streamName)
	if err != nil {
		t.Fatal(err)
	}
	var got uint64
	testenv.Eventually(t, 5*time.Second, fmt.Sprintf("%d messages in the stream", n), func() bool {
		info, err := s.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = info.State.Msgs
		return got >= n
	})
	if got != n {
		t.Fatalf("stream holds %d messages, want %d", got, n)
	}
}

func ids(es []events.Event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// receive reads one event or fails after a deadline.
func receive(t *testing.T, ch <-chan events.Event) events.Event {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("channel closed, want an event")
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return events.Event{}
}

// waitClosed fails unless ch is closed (after draining what is buffered).
func waitClosed(t *testing.T, ch <-chan events.Event) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("channel not closed within 5s")
		}
	}
}
