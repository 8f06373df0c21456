package client

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Submitter submits one job and returns its receipt. *NATS and *HTTP
// implement it.
type Submitter interface {
	Submit(ctx context.Context, s jobs.Submission) (intake.Receipt, error)
}

// Defaults of Options.
const (
	DefaultRetries = 3
	DefaultBackoff = 200 * time.Millisecond
	DefaultTimeout = 10 * time.Second
	// maxBackoff caps the doubling, so that many retries do not turn into
	// waits of minutes.
	maxBackoff = 10 * time.Second
)

// Options tunes retries. The zero value takes the defaults.
type Options struct {
	// Retries is how many times a try is repeated after an "unavailable"
	// answer, a timeout or no responder: 0 means DefaultRetries, a negative
	// value means never. Invalid, conflicting or unauthorized submissions
	// are never retried: the answer would not change.
	Retries int
	// Backoff caps the wait before the first retry, the cap doubled before
	// each next one (each wait is drawn at random below its cap); 0 means
	// DefaultBackoff.
	Backoff time.Duration
	// Timeout bounds each try; 0 means DefaultTimeout. The caller's context
	// bounds all of them together.
	Timeout time.Duration
}

// WithDefaults returns a copy with every unset field filled in.
func (o Options) WithDefaults() Options {
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}
