package eventbus_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
)

func TestPublishRefusesInvalidEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ok := jobEvent("j1", 1, events.TypeJobQueued)
	for name, tc := range map[string]struct {
		mutate func(*events.Event)
		want   string
	}{
		"no id":    {func(ev *events.Event) { ev.ID = "" }, "id is empty"},
		"no type":  {func(ev *events.Event) { ev.Type = "" }, "type is empty"},
		"no time":  {func(ev *events.Event) { ev.Time = time.Time{} }, "time is zero"},
		"bad job":  {func(ev *events.Event) { ev.JobID = "a.b" }, "must not contain"},
		"bad data": {func(ev *events.Event) { ev.Data = map[string]any{"c": make(chan int)} }, "encoding"},
	} {
		ev := ok
		tc.mutate(&ev)
		err := e.pub.Publish(context.Background(), ev)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "eventbus.Publish: ") {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
	if err := e.pub.Publish(context.Background(), ok); err != nil {
		t.Fatalf("valid event: %v", err)
	}
	e.waitStored(t, 1) // and nothing from the refused ones
}

func TestPublishOnClosedConnectionFails(t *testing.T) {
	t.Parallel()
	s := testenv.NATS(t)
	nc := testenv.NATSConn(t, s)
	pub := eventbus.NewNATSPublisher(nc, events.Subjects{})
	nc.Close()
	err := pub.Publish(context.Background(), jobEvent("j1", 1, events.TypeJobQueued))
	if !errors.Is(err, nats.ErrConnectionClosed) {
		t.Fatalf("error %v, want nats.ErrConnectionClosed", err)
	}
}

func TestPublishWithoutConnectionOrContext(t *testing.T) {
	var nilPub *eventbus.NATSPublisher
	if err := nilPub.Publish(context.Background(), jobEvent("j1", 1, events.TypeJobQueued)); err == nil {
		t.Error("nil publisher: no error")
	}
	if err := eventbus.NewNATSPublisher(nil, events.Subjects{}).Publish(context.Background(), jobEvent("j1", 1, events.TypeJobQueued)); err == nil {
		t.Error("nil connection: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := eventbus.NewNATSPublisher(nil, events.Subjects{}).Publish(ctx, jobEvent("j1", 1, events.TypeJobQueued)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v", err)
	}
}

func TestDiscard(t *testing.T) {
	if err := events.Discard.Publish(context.Background(), events.Event{}); err != nil {
		t.Fatal(err)
	}
}
