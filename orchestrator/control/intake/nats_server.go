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
// PREFIX.jobs.submit and, when NATSOptions.Sweeps is set, sweeps on
// PREFIX.sweeps.submit. It joins a queue group, so each request is handled
// by one of the running controllers.
type NATSServer struct {
	nc     *nats.Conn
	opts   NATSOptions
	routes []route
	sem    chan struct{} // shared by every route: MaxInFlight bounds them together

	mu       sync.Mutex
	started  bool
	subs     []*nats.Subscription
	ctx      context.Context // handlers' parent; cancelled after Stop
	cancel   context.CancelFunc
	closed   bool // no more handlers may start
	inflight sync.WaitGroup
	stopOnce sync.Once
	stopped  chan struct{}
}

// route is one subject and the endpoint that serves it.
type route struct {
	subject string
	ep      endpoint
}

// NewNATSServer returns a server that hands submissions arriving on nc to
// sub, and sweeps to opts.Sweeps if set. It does not subscribe until Start.
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
	routes := []route{{opts.Subjects.Submit(), newJobsEndpoint(sub, opts.Timeout, opts.Logger)}}
	if opts.Sweeps != nil {
		routes = append(routes, route{opts.Subjects.SweepSubmit(), sweepHandler(opts.Sweeps, opts.Timeout, opts.Logger)})
	}
	if opts.Jobs != nil {
		routes = append(routes, route{opts.Subjects.JobStatus(), &statusEndpoint{jobs: opts.Jobs, timeout: opts.Timeout, log: opts.Logger}})
	}
	return &NATSServer{
		nc:      nc,
		opts:    opts,
		routes:  routes,
		sem:     make(chan struct{}, opts.MaxInFlight),
		stopped: make(chan struct{}),
	}, nil
}

// Start subscribes and returns once the server has registered the
// subscriptions, so a request sent after Start returns is answered.
// Cancelling ctx cancels the calls in flight; it does not unsubscribe (Stop
// does).
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
	subs := make([]*nats.Subscription, 0, len(s.routes))
	unsubscribe := func() {
		for _, sub := range subs {
			_ = sub.Unsubscribe()
		}
	}
	var subjects []string
	for _, r := range s.routes {
		// One subscription per subject is the dispatch: each delivers only
		// its own subject's messages, to its own endpoint.
		sub, err := s.nc.QueueSubscribe(r.subject, s.opts.QueueGroup, func(m *nats.Msg) { s.onMsg(r.ep, m) })
		if err != nil {
			unsubscribe()
			return fmt.Errorf("intake.Start: subscribing to %s: %w", r.subject, err)
		}
		subs = append(subs, sub)
		subjects = append(subjects, r.subject)
	}
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := s.nc.FlushWithContext(fctx)
	cancel()
	if err != nil {
		unsubscribe()
		return fmt.Errorf("intake.Start: confirming subscriptions to %v: %w", subjects, err)
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.subs, s.started = subs, true
	s.opts.Logger.Info("intake: listening", "subjects", subjects, "queue_group", s.opts.QueueGroup)
	return nil
}

// Stop drains the subscriptions: no new requests arrive, those already
// delivered are answered, and Stop returns when the last reply is sent (or
// after DrainTimeout). It is safe to call twice, concurrently, or before
// Start.
func (s *NATSServer) Stop() {
	s.stopOnce.Do(func() {
		defer close(s.stopped)
		s.mu.Lock()
		subs := s.subs
		if !s.started {
			s.closed = true
		}
		s.mu.Unlock()
		if len(subs) == 0 {
			return
		}
		// All drains start before any wait, so that DrainTimeout bounds the
		// whole Stop, not each subscription in turn.
		done := make([]<-chan nats.SubStatus, len(subs))
		for i, sub := range subs {
			done[i] = sub.StatusChanged(nats.SubscriptionClosed)
			if err := sub.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
				s.opts.Logger.Warn("intake: draining a subscription", "subject", sub.Subject, "error", err)
			}
		}
		timeout := time.After(s.opts.DrainTimeout)
	wait:
		for i := range subs {
			select {
			case <-done[i]: // also closed if the connection closed
			case <-timeout:
				s.opts.Logger.Warn("intake: drain timed out; dropping queued requests", "timeout", s.opts.DrainTimeout)
				for _, sub := range subs[i:] {
					_ = sub.Unsubscribe()
				}
				break wait
			}
		}
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.inflight.Wait()
		s.cancel()
	})
	<-s.stopped
}

// onMsg runs on a subscription's delivery goroutine, one message at a time;
// it hands each message to its own goroutine once a slot is free.
func (s *NATSServer) onMsg(ep endpoint, m *nats.Msg) {
	if m.Reply == "" {
		// A publish instead of a request: nobody would learn the ID or an
		// error, so nothing is enqueued.
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
		_, body := ep.handle(ctx, m.Data, "subject", m.Subject)
		s.respond(m, body)
	}()
}

func (s *NATSServer) respond(m *nats.Msg, body []byte) {
	if max := s.nc.MaxPayload(); max > 0 && int64(len(body)) > max {
		// A batch's results can outgrow the server's max_payload. Some or
		// all of its jobs may be recorded; the same jobs in smaller
		// batches, with the same idempotency keys, find them.
		s.opts.Logger.Warn("intake: reply over the server's max_payload", "bytes", len(body), "max_payload", max)
		body = errorReplyBody(Error{Code: CodeTooLarge, Message: fmt.Sprintf(
			"the reply (%d bytes) would exceed the NATS server's max_payload (%d), so it is not sent: the jobs may or may not be recorded; resend them in batches of at most %d jobs with the same idempotency keys to read their receipts",
			len(body), max, MaxNATSBatch(max)/2)})
	}
	if err := m.Respond(body); err != nil {
		s.opts.Logger.Warn("intake: reply not sent", "error", err)
	}
}

func errorReplyBody(e Error) []byte {
	_, b := errorReply(e)
	return b
}
