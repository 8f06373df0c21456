package cost

import (
	"time"

	"github.com/ballastdev/ballast/internal/timespan"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// billedEnd is when the billing of a worker of p that lived from start to
// end runs out: end rounded up to the pool's billing unit, and never before
// the minimum.
//
// It asks policy.Pool.PaidUntil at the last instant the worker was held,
// one nanosecond (the clock's resolution) before the release, not at the
// release itself: PaidUntil at an exact unit boundary counts the next unit
// as started, which is right for a worker still held then but would bill a
// worker released after exactly one hour for two. Per-second billing is
// continuous, so the release itself is the floor.
func billedEnd(p policy.Pool, start, end time.Time) time.Time {
	return timespan.Later(p.PaidUntil(start, end.Add(-time.Nanosecond)), end)
}

// clip returns the part of [a, b) inside [from, until); ok is false when
// nothing is.
func clip(a, b, from, until time.Time) (time.Time, time.Time, bool) {
	a, b = timespan.Later(a, from), timespan.Earlier(b, until)
	return a, b, a.Before(b)
}
