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
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/intake"
)

// tryFunc sends one encoded submission once.
type tryFunc func(ctx context.Context, body []byte) (intake.Receipt, error)

// submit runs the tries of one submission. The key is fixed before the first
// try and the same body is resent, so every try names the same job.
func submit(ctx context.Context, o Options, s jobs.Submission, try tryFunc) (intake.Receipt, error) {
	if s.IdempotencyKey == "" {
		s.IdempotencyKey = newKey()
	}
	body, err := json.Marshal(s)
	if err != nil {
		return intake.Receipt{}, fmt.Errorf("client.Submit: encoding: %w", err)
	}
	if len(body) > jobs.MaxSubmissionBytes {
		// Refused here so that it is not sent only to be refused there.
		return intake.Receipt{}, fmt.Errorf("client.Submit: %w", &Error{Code: intake.CodeTooLarge, Message: "the submission is too large",
			Problems: []*jobs.FieldError{{Field: "body", Message: fmt.Sprintf("the message is %d bytes; the limit is %d (send large inputs by reference, e.g. a path or URL parameter)", len(body), jobs.MaxSubmissionBytes)}}})
	}
	backoff := o.Backoff
	for n := 1; ; n++ {
		tctx, cancel := context.WithTimeout(ctx, o.Timeout)
		r, err := try(tctx, body)
		cancel()
		if err == nil {
			return r, nil
		}
		switch {
		case ctx.Err() != nil:
			return intake.Receipt{}, fmt.Errorf("client.Submit: %w (idempotency_key %s; resubmit with it to find the job)", err, s.IdempotencyKey)
		case !retryable(err):
			return intake.Receipt{}, fmt.Errorf("client.Submit: %w", err)
		case n > o.Retries:
			return intake.Receipt{}, fmt.Errorf("client.Submit: after %d tries: %w (idempotency_key %s; resubmit with it to find the job)", n, err, s.IdempotencyKey)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return intake.Receipt{}, fmt.Errorf("client.Submit: %w (after %d tries; last: %w; idempotency_key %s)", ctx.Err(), n, err, s.IdempotencyKey)
		}
		backoff = min(2*backoff, maxBackoff)
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
