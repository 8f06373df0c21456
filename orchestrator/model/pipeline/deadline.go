package pipeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// deadline is a parsed Pipeline.Deadline: a wall-clock time of day, or an
// offset from the scheduled time.
type deadline struct {
	clock        bool
	hour, minute int
	afterStart   time.Duration
}

// parseDeadline reads "HH:MM" (00:00 to 23:59) or a positive duration of at
// most jobs.MaxTimeout.
func parseDeadline(s string) (deadline, error) {
	if h, m, ok := strings.Cut(s, ":"); ok {
		hour, err1 := strconv.Atoi(h)
		minute, err2 := strconv.Atoi(m)
		if err1 != nil || err2 != nil || len(h) != 2 || len(m) != 2 || hour > 23 || minute > 59 || hour < 0 || minute < 0 {
			return deadline{}, fmt.Errorf("%q is not a time of day; write HH:MM from 00:00 to 23:59, e.g. \"06:00\"", s)
		}
		return deadline{clock: true, hour: hour, minute: minute}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return deadline{}, fmt.Errorf("%q is neither a time of day like \"06:00\" nor a duration like \"3h\"", s)
	}
	if d <= 0 || d > jobs.MaxTimeout {
		return deadline{}, fmt.Errorf("%s must be positive and at most %s after the scheduled time", d, jobs.MaxTimeout)
	}
	return deadline{afterStart: d}, nil
}

// DeadlineFor returns when the run scheduled at scheduled must be done, or
// the zero time when the pipeline has no deadline.
//
// A duration counts real time from the scheduled time. A clock time is the
// first such wall-clock time in the pipeline's zone strictly after the
// scheduled time: "06:00" for a 02:30 run is the same morning, for a 23:00
// run the next morning. On a spring-forward day a deadline inside the
// skipped hour moves to the same distance after the jump, as time.Date does.
func DeadlineFor(p Pipeline, scheduled time.Time) (time.Time, error) {
	if p.Deadline == "" {
		return time.Time{}, nil
	}
	d, err := parseDeadline(p.Deadline)
	if err != nil {
		return time.Time{}, err
	}
	if !d.clock {
		return scheduled.Add(d.afterStart), nil
	}
	loc, err := LoadZone(p.TimeZone)
	if err != nil {
		return time.Time{}, err
	}
	local := scheduled.In(loc)
	y, m, day := local.Date()
	for i := 0; i < 3; i++ { // today, or tomorrow; a third try covers odd zone jumps
		t := time.Date(y, m, day+i, d.hour, d.minute, 0, 0, loc)
		if t.After(scheduled) {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("no %02d:%02d after %s in %s", d.hour, d.minute, local, loc)
}
