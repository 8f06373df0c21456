package trace

import (
	"iter"
	"time"
)

// calendarDay is one local calendar day of a generated trace, as offsets
// from its start clipped to [0, span): the first day may begin after its
// midnight and the last end before the next one. Days are 23 or 25 hours
// long when clocks change.
type calendarDay struct {
	from, to time.Duration
	midnight time.Time // local midnight that begins the day
	start    time.Time // the trace's start, to turn wall times into offsets
}

// calendarDays lists the days that overlap [start, start+span).
func calendarDays(start time.Time, span time.Duration) iter.Seq[calendarDay] {
	return func(yield func(calendarDay) bool) {
		loc := start.Location()
		y, m, d := start.Date()
		for ; ; d++ { // time.Date normalizes April 31 to May 1
			midnight := time.Date(y, m, d, 0, 0, 0, 0, loc)
			next := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
			day := calendarDay{
				from:     max(midnight.Sub(start), 0),
				to:       min(next.Sub(start), span),
				midnight: midnight,
				start:    start,
			}
			if day.from >= span || !yield(day) {
				return
			}
		}
	}
}

// at is the offset of the wall-clock time of day tod (time since midnight)
// on this day. It goes through time.Date rather than adding tod to midnight
// so that 06:00 stays 06:00 on the days clocks change.
func (d calendarDay) at(tod time.Duration) time.Duration {
	y, m, day := d.midnight.Date()
	h, rest := tod/time.Hour, tod%time.Hour
	t := time.Date(y, m, day, int(h), 0, 0, 0, d.midnight.Location()).Add(rest)
	return t.Sub(d.start)
}

// monthDay is the offset of local midnight of day dd of the month m months
// after this day's month (dd may be 0 or negative: time.Date normalizes).
func (d calendarDay) monthDay(months, dd int) time.Duration {
	y, m, _ := d.midnight.Date()
	return time.Date(y, m+time.Month(months), dd, 0, 0, 0, 0, d.midnight.Location()).Sub(d.start)
}

// clamp limits an offset to the day.
func (d calendarDay) clamp(t time.Duration) time.Duration {
	return min(max(t, d.from), d.to)
}
