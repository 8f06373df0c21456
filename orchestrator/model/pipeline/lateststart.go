package pipeline

import (
	"slices"
	"time"
)

// ExpectedDuration is what a step is expected to take: the 90th percentile
// (nearest rank) of its past successful runs' durations. The p90 rather than
// the mean, because overflowing a little early costs a premium while
// starting too late misses the deadline. It reports false with no history.
func ExpectedDuration(history []time.Duration) (time.Duration, bool) {
	if len(history) == 0 {
		return 0, false
	}
	d := slices.Clone(history)
	slices.Sort(d)
	rank := (9*len(d) + 9) / 10 // ceil(0.9 n), 1-based
	return d[rank-1], true
}

// LatestStart is the latest time a step of a run due at deadline may start
// and still be expected to meet it: the deadline less the step's expected
// duration (ExpectedDuration of history). Without history it falls back to
// the step's timeout, the longest one attempt may run: with nothing known,
// the step is assumed to need all of it, so it overflows early (at once if
// the deadline is nearer than its timeout) rather than late. A step past its
// latest start may overflow at once; the policy counts any wait beyond it
// as too long.
func LatestStart(deadline time.Time, history []time.Duration, timeout time.Duration) time.Time {
	expected, ok := ExpectedDuration(history)
	if !ok {
		expected = timeout
	}
	return deadline.Add(-expected)
}
