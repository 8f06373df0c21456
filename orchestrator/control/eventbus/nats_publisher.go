package eventbus

import (
	"github.com/ballastdev/ballast/orchestrator/model/events"

	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSPublisher publishes events with core NATS. The stream made by
// EnsureStream captures them; the Nats-Msg-Id header lets it drop a
// republished event.
//
// Publish does not wait for the server: it returns once the event is in the
// connection's buffer, so a worker is never held up by a JetStream round
// trip. The cost is that delivery is at most once. On a closed connection
// Publish returns an error. While nats.go is reconnecting it keeps events in
// its reconnect buffer (nats.ReconnectBufSize, 8 MB by default) and sends them
// once connected; Publish then returns nil, and only fails when that buffer
// is full or reconnecting is given up.
type NATSPublisher struct {
	nc   *nats.Conn
	subj events.Subjects
}

// NewNATSPublisher returns a publisher on nc using the subjects of subj.
func NewNATSPublisher(nc *nats.Conn, subj events.Subjects) *NATSPublisher {
	return &NATSPublisher{nc: nc, subj: subj}
}

// Publish validates e and sends it on its job's or worker's subject.
func (p *NATSPublisher) Publish(ctx context.Context, e events.Event) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("eventbus.Publish: %w", err)
	}
	if p == nil || p.nc == nil {
		return errors.New("eventbus.Publish: no NATS connection (use events.Discard to run without NATS)")
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("eventbus.Publish: %w", err)
	}
	subject, err := p.subj.For(e)
	if err != nil {
		return fmt.Errorf("eventbus.Publish: %w", err)
	}
	data, err := e.AppendJSON(make([]byte, 0, 320))
	if err != nil {
		return fmt.Errorf("eventbus.Publish: encoding %s event %s: %w", e.Type, e.ID, err)
	}
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, e.ID)
	if err := p.nc.PublishMsg(msg); err != nil {
		return fmt.Errorf("eventbus.Publish: %s on %s: %w", e.Type, subject, err)
	}
	return nil
}
