package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ballastdev/ballast/internal/retry"
)

// Defaults for RetryOptions.
const (
	DefaultRetryAttempts   = 3
	DefaultRetryBackoff    = time.Second
	DefaultRetryMaxBackoff = 30 * time.Second
)

// RetryOptions configures WithRetry.
type RetryOptions struct {
	// Attempts is how many times Launch is tried in all; default
	// DefaultRetryAttempts.
	Attempts int
	// Backoff caps the wait before the second attempt, the cap doubled for
	// each one after; default DefaultRetryBackoff. Each wait is drawn at
	// random below its cap, so that controllers failing together do not
	// come back together.
	Backoff time.Duration
	// MaxBackoff caps every wait; default DefaultRetryMaxBackoff.
	MaxBackoff time.Duration
	// Logger logs each retry; nil discards.
	Logger *slog.Logger
}

// retrying is a Provider whose Launch retries launch failures.
type retrying struct {
	Provider
	opts RetryOptions
	bo   retry.Backoff
	log  *slog.Logger
}

// WithRetry wraps p so that Launch retries on ErrLaunchFailed, with
// exponential backoff, asking each time only for the workers still missing.
// ErrStockOut is returned at once: waiting out a stock-out is the policy's
// call (it falls back to another pool after SpotFallbackAfter), and retrying
// here would only delay that. Other errors (a cancelled context, bad
// arguments, malformed script output) are not retried either.
//
// The final error is a *LaunchError whose Attempts says how many tries were
// made and whose Started counts the instances of every attempt. Launch
// blocks through the backoffs, bounded by ctx. Release, List and Close are
// p's own.
func WithRetry(p Provider, opts RetryOptions) Provider {
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultRetryAttempts
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultRetryBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultRetryMaxBackoff
	}
	opts.MaxBackoff = max(opts.MaxBackoff, opts.Backoff)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &retrying{Provider: p, opts: opts, bo: retry.Backoff{Base: opts.Backoff, Max: opts.MaxBackoff}, log: log}
}

// Launch tries p.Launch until all n instances are started, the error is
// not a launch failure, or the attempts run out.
func (r *retrying) Launch(ctx context.Context, pool string, n int) ([]Instance, error) {
	var all []Instance
	for attempt := 1; ; attempt++ {
		got, err := r.Provider.Launch(ctx, pool, n-len(all))
		all = append(all, got...)
		if err == nil {
			return all, nil
		}
		final := attempt >= r.opts.Attempts || len(all) >= n ||
			errors.Is(err, ErrStockOut) || !errors.Is(err, ErrLaunchFailed)
		if final {
			return all, withAttempts(err, attempt, n, len(all))
		}
		wait := r.bo.Delay(attempt)
		r.log.Warn("launch failed; retrying", "pool", pool, "missing", n-len(all),
			"attempt", attempt, "backoff", wait, "err", err)
		if cerr := r.bo.Wait(ctx, wait); cerr != nil {
			return all, fmt.Errorf("%w; retry abandoned: %w", withAttempts(err, attempt, n, len(all)), cerr)
		}
	}
}

// withAttempts returns err reporting the whole retried launch rather than
// its last attempt. The LaunchError is copied: err may be shared.
func withAttempts(err error, attempts, requested, started int) error {
	var le *LaunchError
	if !errors.As(err, &le) {
		if attempts == 1 {
			return err
		}
		return fmt.Errorf("%w (after %d attempts)", err, attempts)
	}
	cp := *le
	cp.Attempts, cp.Requested, cp.Started = attempts, requested, started
	return &cp
}
