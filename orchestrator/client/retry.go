package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/retry"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
)

// kind describes one kind of request V to the code shared by jobs and
// sweeps: where it goes, how large it may be, where its idempotency key is
// and what a good receipt R holds.
type kind[V, R any] struct {
	op      string // the method, prefixing its errors
	noun    string // "job" or "sweep"
	limit   int    // the intake's size limit, in bytes
	hint    string // how to get under limit
	subject func(events.Subjects) string
	path    string           // the HTTP route
	key     func(*V) *string // the request's idempotency key
	id      func(R) string   // the ID in a receipt; "" means the reply is not one
	// decode reads a receipt; nil is json.Unmarshal.
	decode func(data []byte, r *R) error
}

var (
	jobKind = kind[jobs.Submission, intake.Receipt]{
		op: "client.Submit", noun: "job",
		limit: jobs.MaxSubmissionBytes, hint: "send large inputs by reference, e.g. a path or URL parameter",
		subject: events.Subjects.Submit, path: intake.SubmitPath,
		key: func(s *jobs.Submission) *string { return &s.IdempotencyKey },
		id:  func(r intake.Receipt) string { return r.JobID },
	}
	// statusKind only decodes replies: status requests are not
	// submissions and have no key or retries.
	statusKind = kind[intake.StatusRequest, intake.JobStatus]{
		op: "client.Status", noun: "job", subject: events.Subjects.JobStatus,
		id: func(r intake.JobStatus) string { return r.JobID },
	}
	sweepKind = kind[sweep.Spec, intake.SweepReceipt]{
		op: "client.SubmitSweep", noun: "sweep",
		limit: sweep.MaxSpecBytes, hint: "write a long list of trials as a grid or a random space, and send large inputs by reference",
		subject: events.Subjects.SweepSubmit, path: intake.SweepSubmitPath,
		key: func(s *sweep.Spec) *string { return &s.IdempotencyKey },
		id:  func(r intake.SweepReceipt) string { return r.SweepID },
	}
)

// tryFunc sends one encoded request once.
type tryFunc[R any] func(ctx context.Context, body []byte) (R, error)

// submit runs the tries of one request v of kind k. The key is fixed before
// the first try and the same body is resent, so every try names the same
// job or sweep.
func submit[V, R any](ctx context.Context, o Options, k kind[V, R], v V, try tryFunc[R]) (R, error) {
	var zero R
	key := k.key(&v)
	if *key == "" {
		*key = newKey()
	}
	body, err := json.Marshal(v)
	if err != nil {
		return zero, fmt.Errorf("%s: encoding: %w", k.op, err)
	}
	if len(body) > k.limit {
		// Refused here so that it is not sent only to be refused there.
		return zero, fmt.Errorf("%s: %w", k.op, &Error{Code: intake.CodeTooLarge, Message: "the submission is too large",
			Problems: []*jobs.FieldError{{Field: "body", Message: fmt.Sprintf("the message is %d bytes; the limit is %d (%s)", len(body), k.limit, k.hint)}}})
	}
	return tries(ctx, o, k.op, fmt.Sprintf("idempotency_key %s; resubmit with it to find the %s", *key, k.noun),
		func(ctx context.Context) (R, error) { return try(ctx, body) })
}

// tries calls try until it succeeds, its error is not retryable or o's
// retries run out. hint tells the caller how to find what a lost try may
// have recorded.
func tries[R any](ctx context.Context, o Options, op, hint string, try func(context.Context) (R, error)) (R, error) {
	var zero R
	// Many clients cut off by one intake outage come back spread out.
	bo := retry.Backoff{Base: o.Backoff, Max: maxBackoff}
	for n := 1; ; n++ {
		tctx, cancel := context.WithTimeout(ctx, o.Timeout)
		r, err := try(tctx)
		cancel()
		if err == nil {
			return r, nil
		}
		switch {
		case ctx.Err() != nil:
			return zero, fmt.Errorf("%s: %w (%s)", op, err, hint)
		case !retryable(err):
			return zero, fmt.Errorf("%s: %w", op, err)
		case n > o.Retries:
			return zero, fmt.Errorf("%s: after %d tries: %w (%s)", op, n, err, hint)
		}
		if cerr := bo.Wait(ctx, bo.Delay(n)); cerr != nil {
			return zero, fmt.Errorf("%s: %w (after %d tries; last: %w; %s)", op, cerr, n, err, hint)
		}
	}
}

// retryable reports whether another try may get a different answer.
func retryable(err error) bool {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Code == intake.CodeUnavailable
	}
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, ErrNoIntake) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// newKey returns a random idempotency key.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	return "auto-" + hex.EncodeToString(b[:])
}
