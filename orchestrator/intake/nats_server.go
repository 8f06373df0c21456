package intake

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// NATSServer answers submissions sent as NATS requests on
// PREFIX.jobs.submit. It joins a queue group, so each request is handled by
// one of the running controllers.
type NATSServer struct {
	nc   *nats.Conn
	opts NATSOptions
	h    handler
	sem  chan struct{}

	mu       sync.Mutex
	started  bool
	sub      *nats.Subscription
	ctx      context.Context // handlers' parent; cancelled after Stop
	cancel   context.CancelFunc
	closed   bool // no more handlers may start
	inflight sync.WaitGroup
	stopOnce sync.Once
	stopped  chan struct{}
}

// NewNATSServer returns a server that hands submissions arriving on nc to
// sub. It does not subscribe until Start.
func NewNATSServer(nc *nats.Conn, sub Submitter, opts NATSOptions) (*NATSServer, error) {
	if nc == nil {
		return nil, errors.New("intake.NewNATSServer: no NATS connection")
	}
	if sub == nil {
		return nil, errors.New("intake.NewNATSServer: no Submitter")
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("intake.NewNATSServer: %w", err)
	}
	opts = opts.WithDefaults()
	return &NATSServer{
		nc:      nc,
		opts:    opts,
		h:       handler{sub: sub, timeout: opts.Timeout, log: opts.Logger},
		sem:     make(chan struct{}, opts.MaxInFlight),
		stopped: make(chan struct{}),
	}, nil
}

// Start subscribes and returns once the server has registered the
// subscription, so a request sent after Start returns is answered. Cancelling
// ctx cancels the Submit calls in flight; it does not unsubscribe (Stop does).
func (s *NATSServer) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.started:
		return errors.New("intake.Start: already started")
	case s.closed:
		return errors.New("intake.Start: stopped; make a new server")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("intake.Start: %w", err)
	}
	subject := s.opts.Subjects.Submit()
	sub, err := s.nc.QueueSubscribe(subject, s.opts.QueueGroup, s.onMsg)
	if err != nil {
		return fmt.Errorf("intake.Start: subscribing to %s: %w", subject, err)
	}
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = s.nc.FlushWithContext(fctx)
	cancel()
	if err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("intake.Start: confirming subscription to %s: %w", subject, err)
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.sub, s.started = sub, true
	s.opts.Logger.Info("intake: listening", "subject", subject, "queue_group", s.opts.QueueGroup)
	return nil
}

// Stop drains the subscription: no new requests arrive, those already
// delivered are answered, and Stop returns when the last reply is sent (or
// after DrainTimeout). It is safe to call twice, concurrently, or before
// Start.
func (s *NATSServer) Stop() {
	s.stopOnce.Do(func() {
		defer close(s.stopped)
		s.mu.Lock()
		sub := s.sub
		if !s.started {
			s.closed = true
		}
		s.mu.Unlock()
		if sub == nil {
			return
		}
		done := sub.StatusChanged(nats.SubscriptionClosed)
		if err := sub.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			s.opts.Logger.Warn("intake: draining the subscription", "error", err)
		}
		select {
		case <-done: // also closed if the connection closed
		case <-time.After(s.opts.DrainTimeout):
			s.opts.Logger.Warn("intake: drain timed out; dropping queued requests", "timeout", s.opts.DrainTimeout)
			_ = sub.Unsubscribe()
		}
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.inflight.Wait()
		s.cancel()
	})
	<-s.stopped
}

// onMsg runs on the subscription's delivery goroutine, one message at a
// time; it hands each message to its own goroutine once a slot is free.
func (s *NATSServer) onMsg(m *nats.Msg) {
	if m.Reply == "" {
		// A publish instead of a request: nobody would learn the job ID or
		// an error, so nothing is enqueued.
		s.opts.Logger.Warn("intake: dropping a submission without a reply subject (send it as a request)",
			"subject", m.Subject, "bytes", len(m.Data))
		return
	}
	s.sem <- struct{}{}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.sem
		s.respond(m, errorReplyBody(Error{Code: CodeUnavailable, Message: "the intake is shutting down and did not read this submission: retry"}))
		return
	}
	s.inflight.Add(1)
	ctx := s.ctx
	s.mu.Unlock()
	go func() {
		defer s.inflight.Done()
		defer func() { <-s.sem }()
		_, body := s.h.handle(ctx, m.Data, "subject", m.Subject)
		s.respond(m, body)
	}()
}

func (s *NATSServer) respond(m *nats.Msg, body []byte) {
	if err := m.Respond(body); err != nil {
		s.opts.Logger.Warn("intake: reply not sent", "error", err)
	}
}

func errorReplyBody(e Error) []byte {
	_, b := errorReply(e)
	return b
}
