package testenv

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// EventLog collects the events published on a subject while a test runs.
type EventLog struct {
	mu  sync.Mutex
	got []events.Event
}

// CollectEvents subscribes to subject until the test ends. The
// subscription is flushed to the server before it returns, so an event
// published afterwards is collected.
func CollectEvents(t testing.TB, nc *nats.Conn, subject string) *EventLog {
	t.Helper()
	l := &EventLog{}
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		var e events.Event
		if json.Unmarshal(m.Data, &e) == nil {
			l.mu.Lock()
			l.got = append(l.got, e)
			l.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("testenv.CollectEvents %s: %v", subject, err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatalf("testenv.CollectEvents %s: %v", subject, err)
	}
	return l
}

// Any says whether an event collected so far satisfies match.
func (l *EventLog) Any(match func(events.Event) bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.got {
		if match(e) {
			return true
		}
	}
	return false
}
