package pipeline

import (
	"time"
)

// FireGrace is how late a scheduled time may be noticed and still count as on
// time rather than missed. It covers the controller's tick interval and a
// slow tick; anything later was missed while no controller was running.
const FireGrace = time.Minute

// Due returns the scheduled times to fire now: at most one.
//
// lastScheduled is the latest scheduled time the controller has already
// handled, fired or deliberately skipped (see Latest for advancing it). The
// times due are those in (lastScheduled, now]; only the latest of them can
// fire, so a pipeline never starts a burst of runs after an outage:
//
//   - If the latest due time is within FireGrace of now it is on time and
//     fires, whatever the catch-up policy (older missed times are dropped).
//   - Otherwise it was missed: CatchUpSkip fires nothing, CatchUpLatest fires
//     it once.
//
// With no previous run (lastScheduled is zero) nothing was missed, because
// nothing was ever expected: only a time within FireGrace of now fires.
func Due(s Schedule, lastScheduled, now time.Time, catchUp CatchUp) []time.Time {
	from := lastScheduled
	if from.IsZero() {
		from = now.Add(-FireGrace)
	}
	latest, ok := Latest(s, from, now)
	if !ok {
		return nil
	}
	if now.Sub(latest) <= FireGrace || catchUp == CatchUpLatest {
		return []time.Time{latest}
	}
	return nil
}

// Latest returns the last fire time in (after, now], if any. The controller
// records it as handled after acting on Due, so skipped times are not
// considered again on the next tick.
//
// It searches backwards from now in windows growing fourfold, then narrows
// down inside the first window that holds a fire time, so a seconds-level
// schedule after a long outage costs a few hundred steps, not one per second.
func Latest(s Schedule, after, now time.Time) (time.Time, bool) {
	if !after.Before(now) {
		return time.Time{}, false
	}
	return latestIn(s, after, now)
}

// maxLookback bounds the search; a spec firing less often than this (which
// robfig cannot express anyway) is treated as having no missed time.
const maxLookback = 50 * 365 * 24 * time.Hour

func latestIn(s Schedule, after, end time.Time) (time.Time, bool) {
	for w := time.Minute; ; w *= 4 {
		start, last := end.Add(-w), false
		if w >= maxLookback || !start.After(after) {
			start, last = later(after, end.Add(-maxLookback)), true
		}
		t := s.Next(start)
		if !t.IsZero() && !t.After(end) {
			if w > time.Minute {
				// The previous window, (end-w/4, end], held no fire time.
				return latestIn(s, start, end.Add(-w/4))
			}
			for { // at most a minute's worth of second-level fire times, or a narrowed range
				n := s.Next(t)
				if n.IsZero() || n.After(end) {
					return t, true
				}
				t = n
			}
		}
		if last {
			return time.Time{}, false
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// DedupeKey names one firing of a pipeline: the same pipeline and scheduled
// time always give the same key, whichever controller fires it, so a second
// controller (or a restart mid-tick) cannot start the run twice.
func DedupeKey(pipeline string, scheduled time.Time) string {
	return "pipeline:" + pipeline + ":" + scheduled.UTC().Format(time.RFC3339)
}
