package trace

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Synthetic describes a generated trace with the three load rhythms of
// Ballast's design: periodic pipelines (core), ad hoc pulses (burst) and a
// mixed base that peaks at month end (burst). Each rhythm is optional; at
// least one must be on. Generate turns it into a Trace.
//
// Times of day, weekdays and month ends follow Start's calendar in Start's
// location, daylight-saving changes included: a daily 06:00 pipeline fires
// at 06:00 local time every day.
type Synthetic struct {
	// Name becomes Trace.Name.
	Name string
	// Seed picks the random streams: the same Synthetic and Seed give the
	// same trace, job for job.
	Seed uint64
	// Start is the wall-clock time of offset 0; required, since the rhythms
	// follow its calendar. It need not be a midnight.
	Start time.Time
	// Span is how long submissions go on (for example 30 days). Jobs may
	// run past it.
	Span time.Duration

	// Slots is the slot-count distribution of pulse and mixed jobs and of
	// pipelines that set no Slots; every job takes 1 slot when it is empty.
	Slots []SlotWeight
	// Duration is the run-time distribution of every rhythm that sets none.
	Duration LogNormal
	// Teams and Templates are picked uniformly for pulse and mixed jobs;
	// both are required when either rhythm is on.
	Teams, Templates []string

	// Periodic lists the pipelines; none when empty.
	Periodic []Pipeline
	// Pulse is the ad hoc rhythm; off when nil.
	Pulse *Pulse
	// Mixed is the month-end rhythm; off when nil.
	Mixed *Mixed
}

// SlotWeight is one value of a slot-count distribution and its relative
// weight (weights need not sum to 1).
type SlotWeight struct {
	Slots  int
	Weight float64
}

// LogNormal is a log-normal distribution of run times: Median times
// e^(Sigma*Z) for a standard normal Z. Samples are rounded to the
// millisecond, at least 1 ms, so traces stay compact in CSV.
type LogNormal struct {
	// Median is the median run time (> 0).
	Median time.Duration
	// Sigma is the standard deviation of the logarithm; 0 makes every run
	// take Median, 1 puts 95% of them within 7x either side of it.
	Sigma float64
	// Max caps samples when > 0: the tail of a log-normal is long enough
	// that, with a large Sigma, a few jobs in a million would otherwise run
	// thousands of times the median and dominate a simulated month.
	Max time.Duration
}

// Pipeline is a periodic job source: Jobs jobs submitted together at a fixed
// time of day, every day or on one weekday. Its jobs are core and carry
// Deadline.
type Pipeline struct {
	// Template and Team name the jobs; both required.
	Template, Team string
	// At is the time of day, as the time since local midnight, in [0, 24h).
	// On the day clocks skip it, it fires at the same offset after the
	// skipped hour (time.Date's rule).
	At time.Duration
	// Weekly fires only on Weekday instead of every day.
	Weekly  bool
	Weekday time.Weekday
	// Jobs is how many jobs each firing submits (>= 1).
	Jobs int
	// Slots each job takes; 0 draws from Synthetic.Slots.
	Slots int
	// Duration overrides Synthetic.Duration when its Median is set.
	Duration LogNormal
	// Deadline, when > 0, is each job's Deadline.
	Deadline time.Duration
	// Checkpointable marks the jobs checkpointable.
	Checkpointable bool
}

// Pulse is ad hoc work: Poisson arrivals whose rate is WorkRate during
// working hours (WorkStart to WorkEnd, Monday to Friday) and OffRate
// otherwise. Its jobs are burst.
type Pulse struct {
	// OffRate and WorkRate are mean arrivals per hour (>= 0, not both 0).
	OffRate, WorkRate float64
	// WorkStart and WorkEnd are times of day; 9:00 to 18:00 when both are 0.
	WorkStart, WorkEnd time.Duration
	// Checkpointable is the fraction of jobs marked checkpointable, in [0, 1].
	Checkpointable float64
	// Duration overrides Synthetic.Duration when its Median is set.
	Duration LogNormal
}

// Mixed is a steady base that rises to a month-end peak: Poisson arrivals
// at Base*PeakRate for most of each month, rising linearly over the last
// RampDays days to PeakRate at the month's last instant. Its jobs are burst.
type Mixed struct {
	// PeakRate is the mean arrivals per hour at the peak (> 0).
	PeakRate float64
	// Base is the base rate as a fraction of the peak, in (0, 1]; 0.3 when 0.
	Base float64
	// RampDays is how many days the rise takes, 1 to 28; 5 when 0.
	RampDays int
	// Checkpointable is the fraction of jobs marked checkpointable, in [0, 1].
	Checkpointable float64
	// Duration overrides Synthetic.Duration when its Median is set.
	Duration LogNormal
}

// Defaults of the optional fields, named so the documentation and the code
// cannot drift apart.
const (
	defaultWorkStart = 9 * time.Hour
	defaultWorkEnd   = 18 * time.Hour
	defaultBase      = 0.3
	defaultRampDays  = 5
)

// withDefaults fills the zero optional fields of the rhythms. It copies
// Pulse and Mixed so the caller's values are never modified.
func (g Synthetic) withDefaults() Synthetic {
	if g.Pulse != nil {
		p := *g.Pulse
		if p.WorkStart == 0 && p.WorkEnd == 0 {
			p.WorkStart, p.WorkEnd = defaultWorkStart, defaultWorkEnd
		}
		if p.Duration.Median == 0 {
			p.Duration = g.Duration
		}
		g.Pulse = &p
	}
	if g.Mixed != nil {
		m := *g.Mixed
		if m.Base == 0 {
			m.Base = defaultBase
		}
		if m.RampDays == 0 {
			m.RampDays = defaultRampDays
		}
		if m.Duration.Median == 0 {
			m.Duration = g.Duration
		}
		g.Mixed = &m
	}
	if len(g.Periodic) > 0 {
		ps := make([]Pipeline, len(g.Periodic))
		for i, p := range g.Periodic {
			if p.Duration.Median == 0 {
				p.Duration = g.Duration
			}
			ps[i] = p
		}
		g.Periodic = ps
	}
	return g
}

// validate reports every problem of a Synthetic whose defaults are filled.
func (g Synthetic) validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if g.Start.IsZero() {
		bad("start", "required: the rhythms follow its calendar")
	}
	if g.Span <= 0 || g.Span > MaxOffset {
		bad("span", "%v is outside (0, %v]", g.Span, MaxOffset)
	}
	total := 0.0
	for i, s := range g.Slots {
		if s.Slots < 1 || s.Slots > MaxSlots {
			bad(fmt.Sprintf("slots[%d]", i), "%d slots is outside [1, %d]", s.Slots, MaxSlots)
		}
		if !(s.Weight >= 0) || math.IsInf(s.Weight, 0) {
			bad(fmt.Sprintf("slots[%d]", i), "weight %v is not a finite number >= 0", s.Weight)
		}
		total += s.Weight
	}
	if len(g.Slots) > 0 && !(total > 0) {
		bad("slots", "the weights sum to %v, want > 0", total)
	}
	if g.Pulse == nil && g.Mixed == nil && len(g.Periodic) == 0 {
		bad("rhythms", "none is on: set Periodic, Pulse or Mixed")
	}
	if (g.Pulse != nil || g.Mixed != nil) && (len(g.Teams) == 0 || len(g.Templates) == 0) {
		bad("teams, templates", "pulse and mixed jobs pick from them: give at least one of each")
	}
	for i, p := range g.Periodic {
		f := fmt.Sprintf("periodic[%d]", i)
		if p.Template == "" || p.Team == "" {
			bad(f, "template and team are required")
		}
		if p.At < 0 || p.At >= 24*time.Hour {
			bad(f+".at", "%v is not a time of day in [0, 24h)", p.At)
		}
		if p.Weekly && (p.Weekday < time.Sunday || p.Weekday > time.Saturday) {
			bad(f+".weekday", "%d is not a weekday", p.Weekday)
		}
		if p.Jobs < 1 || p.Jobs > MaxJobs {
			bad(f+".jobs", "%d is outside [1, %d]", p.Jobs, MaxJobs)
		}
		if p.Slots < 0 || p.Slots > MaxSlots {
			bad(f+".slots", "%d is outside [0, %d]", p.Slots, MaxSlots)
		}
		if p.Deadline < 0 || p.Deadline > MaxOffset {
			bad(f+".deadline", "%v is outside [0, %v]", p.Deadline, MaxOffset)
		}
		errs = append(errs, p.Duration.validate(f+".duration"))
	}
	if p := g.Pulse; p != nil {
		if !validRate(p.OffRate) || !validRate(p.WorkRate) || p.OffRate+p.WorkRate == 0 {
			bad("pulse", "rates %v and %v must be finite, >= 0 and not both 0", p.OffRate, p.WorkRate)
		}
		if p.WorkStart < 0 || p.WorkStart >= p.WorkEnd || p.WorkEnd > 24*time.Hour {
			bad("pulse", "working hours %v to %v are not a range of times of day", p.WorkStart, p.WorkEnd)
		}
		if !(p.Checkpointable >= 0 && p.Checkpointable <= 1) {
			bad("pulse.checkpointable", "%v is outside [0, 1]", p.Checkpointable)
		}
		errs = append(errs, p.Duration.validate("pulse.duration"))
	}
	if m := g.Mixed; m != nil {
		if !validRate(m.PeakRate) || m.PeakRate == 0 {
			bad("mixed.peakrate", "%v must be finite and > 0", m.PeakRate)
		}
		if !(m.Base > 0 && m.Base <= 1) {
			bad("mixed.base", "%v is outside (0, 1]", m.Base)
		}
		if m.RampDays < 1 || m.RampDays > 28 {
			bad("mixed.rampdays", "%d is outside [1, 28]", m.RampDays)
		}
		if !(m.Checkpointable >= 0 && m.Checkpointable <= 1) {
			bad("mixed.checkpointable", "%v is outside [0, 1]", m.Checkpointable)
		}
		errs = append(errs, m.Duration.validate("mixed.duration"))
	}
	return errors.Join(errs...)
}

func validRate(r float64) bool { return r >= 0 && !math.IsInf(r, 0) }

func (d LogNormal) validate(field string) error {
	var errs []error
	if d.Median <= 0 || d.Median > MaxOffset {
		errs = append(errs, fmt.Errorf("%s: median %v is outside (0, %v] (set this one or Synthetic.Duration)", field, d.Median, MaxOffset))
	}
	if !(d.Sigma >= 0) || d.Sigma > 10 {
		errs = append(errs, fmt.Errorf("%s: sigma %v is outside [0, 10]", field, d.Sigma))
	}
	if d.Max != 0 && (d.Max < time.Millisecond || d.Max > MaxOffset) {
		errs = append(errs, fmt.Errorf("%s: max %v is outside [1ms, %v] (0 for none)", field, d.Max, MaxOffset))
	}
	return errors.Join(errs...)
}
