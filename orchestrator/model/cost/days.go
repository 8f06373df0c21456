package cost

import (
	"time"

	"github.com/ballastdev/ballast/internal/timespan"
)

// dayLayout formats a day's key; it sorts as the days do.
const dayLayout = "2006-01-02"

// splitDays calls fn for each calendar day in loc that [a, b) overlaps,
// with the day's key and how much of [a, b) falls on it. Midnights come
// from the calendar, not from adding 24 hours, so days across a
// daylight-saving change get their 23 or 25 hours.
func splitDays(a, b time.Time, loc *time.Location, fn func(day string, d time.Duration)) {
	for a.Before(b) {
		local := a.In(loc)
		y, m, d := local.Date()
		next := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
		// A zone whose midnight is skipped can normalize the next midnight
		// oddly; never let that stall the walk.
		if !next.After(a) {
			next = a.Add(24 * time.Hour)
		}
		end := timespan.Earlier(next, b)
		fn(local.Format(dayLayout), end.Sub(a))
		a = end
	}
}
