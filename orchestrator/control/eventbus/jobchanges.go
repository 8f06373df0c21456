package eventbus

import (
	"github.com/ballastdev/ballast/orchestrator/model/events"

	"fmt"

	"github.com/nats-io/nats.go"
)

// OnJobChange calls fn with the job ID of every job event, on any job. The
// controller's capacity policy uses it as a hint of which job records to
// read again (a checkpoint's time, a move made by another process); the
// records decide, so a forged event costs a read and a lost one is found at
// the next full read. fn runs on the subscription's goroutine and must not
// block. Unsubscribe the returned subscription to stop.
func OnJobChange(nc *nats.Conn, subj events.Subjects, fn func(jobID string)) (*nats.Subscription, error) {
	if nc == nil {
		return nil, fmt.Errorf("eventbus.OnJobChange: no NATS connection")
	}
	subject := subj.Job("*")
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		if e, err := events.Decode(m.Data); err == nil && e.JobID != "" {
			fn(e.JobID)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("eventbus.OnJobChange: subscribing to %s: %w", subject, err)
	}
	return sub, nil
}
