package pipeline

import (
	"time"

	"github.com/ballastdev/ballast/internal/timespan"
)

// FireGrace is how late a scheduled time may be noticed and still count as on
// time rather than missed. It covers the controller's tick interval and a
// slow tick; anything later was missed while no controller was running.
const FireGrace = time.Minute

// Firing is what to do about a pipeline's schedule at one controller tick.
type Firing struct {
	// Time is the latest scheduled time in (handled, now]; zero when none
	// has come since the last one handled.
	Time time.Time
	// Fire says to start a run for Time. When false and Time is set, Time
	// was missed and the catch-up policy drops it: record it as handled.
	Fire bool
	// Late is true when Time is older than the grace: it passed while no
	// controller was running.
	Late bool
}

// Decide says what to do at now, given the latest scheduled time already
// handled (fired or deliberately skipped; zero if none ever was). Only the
// latest time in (handled, now] can fire, so a pipeline never starts a burst
// of runs after an outage:
//
//   - If it is within grace of now it is on time and fires, whatever the
//     catch-up policy (older missed times are dropped).
//   - Otherwise it was missed: CatchUpSkip drops it, CatchUpLatest fires it
//     once, late.
//
// With nothing handled yet nothing was missed, because nothing was ever
// expected: only a time within grace of now counts. grace covers the tick
// interval and a slow tick; FireGrace is the default.
func Decide(s Schedule, handled, now time.Time, catchUp CatchUp, grace time.Duration) Firing {
	from := handled
	if from.IsZero() {
		from = now.Add(-grace)
	}
	latest, ok := Latest(s, from, now)
	if !ok {
		return Firing{}
	}
	late := now.Sub(latest) > grace
	return Firing{Time: latest, Late: late, Fire: !late || catchUp == CatchUpLatest}
}

// Latest returns the last fire time in (after, now], if any. The controller
// records it as handled after acting on Decide, so skipped times are not
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
			start, last = timespan.Later(after, end.Add(-maxLookback)), true
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

// DedupeKey names one firing of a pipeline: the same pipeline and scheduled
// time always give the same key, whichever controller fires it, so a second
// controller (or a restart mid-tick) cannot start the run twice.
func DedupeKey(pipeline string, scheduled time.Time) string {
	return "pipeline:" + pipeline + ":" + scheduled.UTC().Format(time.RFC3339)
}
