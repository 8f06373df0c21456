package events

import "context"

// Publisher sends events. Implementations return errors and never panic; a
// caller that must not fail on a lost event (a worker mid-job) logs the
// error and carries on, because the job record, not the event, is the truth.
type Publisher interface {
	Publish(ctx context.Context, e Event) error
}

// Discard is a Publisher that drops every event, for library users who run
// Ballast without NATS.
var Discard Publisher = discard{}

type discard struct{}

// Publish drops e.
func (discard) Publish(context.Context, Event) error { return nil }
