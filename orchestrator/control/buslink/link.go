// Package buslink follows the health of a process's NATS connection: it
// logs each disconnect, reconnect and close once, with the server and the
// error, and keeps how long the connection has been down in all, for a
// metric.
//
// nats.go reconnects on its own and says nothing unless handlers are set,
// so without them a NATS outage looks like a quiet hour: no events, no
// wake-ups, no submissions, and no line in any log.
package buslink

import (
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Link is the health of one NATS connection. Its methods are safe for
// concurrent use; nats.go calls the handlers from its own goroutine.
type Link struct {
	log  *slog.Logger
	name string
	now  func() time.Time

	mu          sync.Mutex
	server      string    // the last server connected to, credentials redacted
	down        time.Time // when the connection went down; zero while up
	total       time.Duration
	disconnects int
	closed      bool
}

// Watch returns a Link that logs to log as the connection called name, and
// the options that feed it; append them to the options of nats.Connect and
// call Connected with the connection once it is made. now is the clock
// (time.Now in production).
func Watch(log *slog.Logger, name string, now func() time.Time) (*Link, []nats.Option) {
	l := &Link{log: log, name: name, now: now}
	return l, []nats.Option{
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) { l.Disconnected(nc.IsClosed(), err) }),
		nats.ReconnectHandler(func(nc *nats.Conn) { l.Reconnected(nc.ConnectedUrlRedacted()) }),
		nats.ClosedHandler(func(nc *nats.Conn) { l.Closed(nc.LastError()) }),
	}
}

// Connected records the server of the first connection, which no handler
// reports, so that a later disconnect can name it.
func (l *Link) Connected(nc *nats.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.server = nc.ConnectedUrlRedacted()
}

// Disconnected is the disconnect handler. closing says the process closed
// the connection itself: that is a close, logged by Closed, not an outage.
func (l *Link) Disconnected(closing bool, err error) {
	if closing {
		return
	}
	l.mu.Lock()
	if !l.down.IsZero() || l.closed {
		l.mu.Unlock()
		return // nats.go reports one disconnect per change; this guards a repeat
	}
	l.down = l.now()
	l.disconnects++
	server := l.server
	l.mu.Unlock()
	l.log.Warn("NATS connection lost; reconnecting (events, wake-ups and submissions over NATS wait until it is back)",
		"connection", l.name, "server", server, "err", err)
}

// Reconnected is the reconnect handler.
func (l *Link) Reconnected(server string) {
	l.mu.Lock()
	var outage time.Duration
	if !l.down.IsZero() {
		outage = l.now().Sub(l.down)
		l.total += outage
		l.down = time.Time{}
	}
	l.server = server
	l.mu.Unlock()
	l.log.Info("NATS connection back", "connection", l.name, "server", server, "down_for", outage.Round(time.Millisecond))
}

// Closed is the closed handler: the connection will not come back, either
// because the process closed it or because nats.go gave up (err says why).
func (l *Link) Closed(err error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	if !l.down.IsZero() {
		l.total += l.now().Sub(l.down)
		l.down = time.Time{}
	}
	server := l.server
	l.mu.Unlock()
	if err != nil {
		l.log.Error("NATS connection closed and will not reconnect", "connection", l.name, "server", server, "err", err)
		return
	}
	l.log.Debug("NATS connection closed", "connection", l.name, "server", server)
}

// State is a Link's health at one moment.
type State struct {
	// Up is false while the connection is down or after it closed.
	Up bool
	// Down is the total time the connection has been down, the current
	// outage included.
	Down time.Duration
	// Disconnects counts outages.
	Disconnects int
}

// State reports the link's health now.
func (l *Link) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := State{Up: l.down.IsZero() && !l.closed, Down: l.total, Disconnects: l.disconnects}
	if !l.down.IsZero() {
		s.Down += l.now().Sub(l.down)
	}
	return s
}
