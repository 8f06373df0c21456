package eventbus

import (
	"github.com/ballastdev/ballast/orchestrator/model/events"

	"fmt"

	"github.com/nats-io/nats.go"
)

// OnJobEnd calls fn for every job event whose state is terminal (succeeded,
// failed, cancelled), on any job. The controller uses it as a wake-up to
// start the next pipeline step or sweep trial at once instead of at its
// next tick; a missed event only costs that tick, since the job records,
// not the events, decide. fn runs on the subscription's goroutine and must
// not block. Unsubscribe the returned subscription to stop.
func OnJobEnd(nc *nats.Conn, subj events.Subjects, fn func(events.Event)) (*nats.Subscription, error) {
	if nc == nil {
		return nil, fmt.Errorf("eventbus.OnJobEnd: no NATS connection")
	}
	subject := subj.Job("*")
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		if e, err := events.Decode(m.Data); err == nil && e.State.Terminal() {
			fn(e)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("eventbus.OnJobEnd: subscribing to %s: %w", subject, err)
	}
	return sub, nil
}
