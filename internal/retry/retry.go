// Package retry spaces out the tries of an operation that may fail for a
// while: capped exponential backoff with full jitter, waits that end when
// the caller's context does. Callers keep their own loops, since each
// decides differently which errors are worth another try and when to stop.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is how long to wait between tries.
type Backoff struct {
	// Base caps the wait after the first failed try; each later failure
	// doubles the cap, up to Max.
	Base time.Duration
	// Max caps every wait; 0 means no cap beyond the doubling.
	Max time.Duration
	// Rand returns a uniform value in [0, n); nil uses math/rand/v2.
	// Tests fix it to see the caps.
	Rand func(n int64) int64
	// Sleep waits d, or less when ctx ends first (then it returns
	// ctx.Err()); nil is the package's Sleep. Tests replace it so that
	// nothing waits.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Cap is the longest wait after the n-th failed try (n from 1):
// Base·2^(n-1), at most Max.
func (b Backoff) Cap(n int) time.Duration {
	c := b.Base
	for i := 1; i < n; i++ {
		if b.Max > 0 && c >= b.Max || c > time.Duration(1<<62) {
			break // doubled past the cap, or near overflow
		}
		c *= 2
	}
	if b.Max > 0 {
		c = min(c, b.Max)
	}
	return max(c, 0)
}

// Delay is the wait after the n-th failed try: uniform in [0, Cap(n)]
// ("full jitter"), so that many clients failing together do not come
// back together.
func (b Backoff) Delay(n int) time.Duration {
	c := b.Cap(n)
	if c <= 0 {
		return 0
	}
	rnd := b.Rand
	if rnd == nil {
		rnd = rand.Int64N
	}
	return time.Duration(rnd(int64(c) + 1))
}

// Wait waits d with b's Sleep: nil once d has passed, ctx.Err() as soon as
// ctx ends.
func (b Backoff) Wait(ctx context.Context, d time.Duration) error {
	if b.Sleep != nil {
		return b.Sleep(ctx, d)
	}
	return Sleep(ctx, d)
}

// Sleep waits d on a timer, or until ctx ends (then it returns ctx.Err()).
// A context already done returns at once, even for d <= 0.
func Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
