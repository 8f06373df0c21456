package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // zone names must resolve on images without zoneinfo; see doc.go

	"github.com/robfig/cron/v3"
)

// parser accepts five fields, six with leading seconds, or a descriptor.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// allHours is the hour bitmask of a schedule that runs in every hour.
const allHours = 1<<24 - 1

// Schedule is a parsed cron spec bound to a time zone. Next is a pure
// function of its argument.
type Schedule struct {
	spec  *cron.SpecSchedule
	local *cron.SpecSchedule // the same fields, read on wall-clock times (UTC stands in for "no zone")
	loc   *time.Location
}

// LoadZone resolves a pipeline's time zone; empty means UTC. "Local" is
// refused because it would make the schedule depend on the host.
func LoadZone(tz string) (*time.Location, error) {
	switch tz {
	case "":
		return time.UTC, nil
	case "Local":
		return nil, errors.New(`"Local" depends on the host; name the zone, e.g. "Europe/Berlin" or "UTC"`)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q (use an IANA name such as \"America/New_York\" or \"UTC\")", tz)
	}
	return loc, nil
}

// Parse parses a cron spec and binds it to the zone tz (empty means UTC).
// The zone belongs in tz, not in a CRON_TZ= prefix, so it is in one place.
func Parse(spec, tz string) (Schedule, error) {
	loc, err := LoadZone(tz)
	if err != nil {
		return Schedule{}, err
	}
	trimmed := strings.TrimSpace(spec)
	switch {
	case trimmed == "":
		return Schedule{}, errors.New(`missing: give a cron spec such as "30 2 * * *" (daily at 02:30)`)
	case strings.HasPrefix(trimmed, "TZ=") || strings.HasPrefix(trimmed, "CRON_TZ="):
		return Schedule{}, errors.New("put the zone in time_zone instead of a TZ= prefix")
	case strings.HasPrefix(trimmed, "@every"):
		return Schedule{}, errors.New(`"@every" counts from the controller's start and moves on every restart; use a cron spec such as "0 */2 * * *"`)
	}
	parsed, err := parser.Parse(trimmed)
	if err != nil {
		return Schedule{}, fmt.Errorf("invalid cron spec %q: %v (write minute hour day-of-month month day-of-week, optionally with leading seconds, e.g. \"30 2 * * *\")", spec, err)
	}
	ss, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return Schedule{}, fmt.Errorf("invalid cron spec %q: not a calendar schedule", spec)
	}
	s := *ss
	s.Location = loc
	w := *ss
	w.Location = time.UTC
	return Schedule{spec: &s, local: &w, loc: loc}, nil
}

// Location is the schedule's zone.
func (s Schedule) Location() *time.Location { return s.loc }

// fixedHours reports whether the schedule names its hours rather than
// running in every hour; only such schedules get the DST adjustments.
func (s Schedule) fixedHours() bool { return s.spec.Hour&allHours != allHours }

// Next returns the first fire time strictly after after, in the schedule's
// zone, or the zero time if there is none within robfig's five-year search.
// See the package documentation for what happens around DST changes.
func (s Schedule) Next(after time.Time) time.Time {
	if s.spec == nil {
		return time.Time{}
	}
	after = after.In(s.loc)
	n := s.spec.Next(after)
	if !s.fixedHours() {
		return in(n, s.loc)
	}
	for i := 0; !n.IsZero() && i < 4 && s.repeated(n); i++ {
		n = s.spec.Next(n)
	}
	if g, ok := s.swallowed(after, n); ok {
		return g
	}
	return in(n, s.loc)
}

func in(t time.Time, loc *time.Location) time.Time {
	if t.IsZero() {
		return t
	}
	return t.In(loc)
}

// repeated reports whether t's wall-clock reading already occurred earlier,
// at the larger offset before clocks fell back.
func (s Schedule) repeated(t time.Time) bool {
	t = t.In(s.loc)
	start, _ := t.ZoneBounds()
	if start.IsZero() {
		return false
	}
	_, offNow := t.Zone()
	_, offBefore := start.Add(-time.Nanosecond).Zone()
	back := time.Duration(offBefore-offNow) * time.Second
	return back > 0 && t.Sub(start) < back
}

// swallowed finds a spring-forward jump in (after, next) whose skipped wall
// times include a fire time; the run then happens at the jump itself.
func (s Schedule) swallowed(after, next time.Time) (time.Time, bool) {
	t := after
	for i := 0; i < 16; i++ { // a handful of transitions fit between two fire times
		_, end := t.ZoneBounds()
		if end.IsZero() || (!next.IsZero() && !end.Before(next)) {
			return time.Time{}, false
		}
		_, offOld := end.Add(-time.Nanosecond).Zone()
		_, offNew := end.Zone()
		if offNew > offOld {
			// Wall times in [from, to) never happen on this day.
			from := wall(end.In(time.FixedZone("", offOld)))
			to := wall(end)
			if f := s.local.Next(from.Add(-time.Second)); !f.IsZero() && f.Before(to) {
				return end.In(s.loc), true
			}
		}
		t = end
	}
	return time.Time{}, false
}

// wall re-reads t's wall clock as a UTC time, so it can be compared with the
// schedule's fields without any zone rules.
func wall(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	return time.Date(y, mo, d, h, mi, sec, 0, time.UTC)
}
