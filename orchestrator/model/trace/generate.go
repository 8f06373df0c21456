package trace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Second seeds of the PCG streams, one per rhythm. Separate streams keep
// the rhythms independent: turning the pulse on or off leaves the periodic
// and mixed jobs of a seed exactly as they were.
const (
	streamPeriodic = 0x7065_7269_6f64_6963 // "periodic"
	streamPulse    = 0x0000_0070_756c_7365 // "pulse"
	streamMixed    = 0x0000_006d_6978_6564 // "mixed"
)

// Generate builds the trace g describes. Jobs are submitted within
// [0, Span); submit times are whole milliseconds and jobs submitted at the
// same millisecond come in the order periodic (in pipeline order), pulse,
// mixed. The result depends on g alone: the same g gives the same trace.
//
// It works one calendar day at a time and merges the day's three already
// ordered streams, so it never sorts the whole trace, and it sizes the Jobs
// slice from the expected job count up front, so a million jobs cost one
// allocation of the final slice and little else.
func Generate(g Synthetic) (Trace, error) {
	g = g.withDefaults()
	if err := g.validate(); err != nil {
		return Trace{}, fmt.Errorf("trace: synthetic %q: %w", g.Name, err)
	}
	gen := generator{
		Synthetic: g,
		slots:     newSlotPicker(g.Slots),
		periodic:  rand.New(rand.NewPCG(g.Seed, streamPeriodic)),
		pulse:     rand.New(rand.NewPCG(g.Seed, streamPulse)),
		mixed:     rand.New(rand.NewPCG(g.Seed, streamMixed)),
	}
	per, pul, mix := g.expected()
	want := per + pul + mix
	if want > MaxJobs {
		return Trace{}, fmt.Errorf("trace: synthetic %q: about %.0f jobs expected, more than %d", g.Name, want, MaxJobs)
	}
	// Six standard deviations of the Poisson counts: the slice practically
	// never has to grow.
	out := make([]Job, 0, int(want+6*math.Sqrt(pul+mix)+64))
	var perDay, pulDay, mixDay []Job
	for day := range calendarDays(g.Start, g.Span) {
		perDay = gen.periodicDay(perDay[:0], day)
		pulDay = gen.pulseDay(pulDay[:0], day)
		mixDay = gen.mixedDay(mixDay[:0], day)
		out = mergeBySubmit(out, perDay, pulDay, mixDay)
		if len(out) > MaxJobs {
			return Trace{}, fmt.Errorf("trace: synthetic %q: more than %d jobs", g.Name, MaxJobs)
		}
	}
	return Trace{Name: g.Name, Start: g.Start, Jobs: out}, nil
}

// generator is a Synthetic with its defaults filled, being generated.
type generator struct {
	Synthetic
	slots                  slotPicker
	periodic, pulse, mixed *rand.Rand
}

// submitAt turns an offset into a submit time: whole milliseconds keep CSV
// files short. Flooring is monotonic, so ordered offsets stay ordered.
func submitAt(t time.Duration) time.Duration { return t - t%time.Millisecond }

func (gen *generator) periodicDay(buf []Job, day calendarDay) []Job {
	for _, p := range gen.Periodic {
		if p.Weekly && day.midnight.Weekday() != p.Weekday {
			continue
		}
		at := day.at(p.At)
		if at < day.from || at >= day.to {
			continue // before the trace's start on its first day, or after its end
		}
		for range p.Jobs {
			slots := p.Slots
			if slots == 0 {
				slots = gen.slots.pick(gen.periodic)
			}
			buf = append(buf, Job{
				Submit:         submitAt(at),
				Duration:       p.Duration.sample(gen.periodic),
				Slots:          slots,
				Class:          jobs.ClassCore,
				Team:           p.Team,
				Template:       p.Template,
				Checkpointable: p.Checkpointable,
				Deadline:       p.Deadline,
			})
		}
	}
	// Pipelines fire in their own order of the day; a stable sort keeps
	// pipeline order for equal times.
	slices.SortStableFunc(buf, bySubmit)
	return buf
}

func (gen *generator) pulseDay(buf []Job, day calendarDay) []Job {
	p := gen.Pulse
	if p == nil {
		return buf
	}
	for _, seg := range pulseSegments(p, day) {
		seg.arrivals(gen.pulse, func(t time.Duration) {
			buf = append(buf, gen.adhoc(gen.pulse, t, p.Duration, p.Checkpointable))
		})
	}
	return buf
}

func (gen *generator) mixedDay(buf []Job, day calendarDay) []Job {
	m := gen.Mixed
	if m == nil {
		return buf
	}
	for _, seg := range mixedSegments(m, day) {
		seg.arrivals(gen.mixed, func(t time.Duration) {
			buf = append(buf, gen.adhoc(gen.mixed, t, m.Duration, m.Checkpointable))
		})
	}
	return buf
}

// adhoc makes a burst job of the pulse or mixed rhythm.
func (gen *generator) adhoc(r *rand.Rand, at time.Duration, d LogNormal, checkpointable float64) Job {
	return Job{
		Submit:         submitAt(at),
		Duration:       d.sample(r),
		Slots:          gen.slots.pick(r),
		Class:          jobs.ClassBurst,
		Team:           gen.Teams[r.IntN(len(gen.Teams))],
		Template:       gen.Templates[r.IntN(len(gen.Templates))],
		Checkpointable: r.Float64() < checkpointable,
	}
}

// pulseSegments splits a day at working hours; weekends are off hours.
func pulseSegments(p *Pulse, day calendarDay) []rateSegment {
	if wd := day.midnight.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return []rateSegment{{day.from, day.to, p.OffRate, p.OffRate}}
	}
	ws, we := day.clamp(day.at(p.WorkStart)), day.clamp(day.at(p.WorkEnd))
	return []rateSegment{
		{day.from, ws, p.OffRate, p.OffRate},
		{ws, we, p.WorkRate, p.WorkRate},
		{we, day.to, p.OffRate, p.OffRate},
	}
}

// mixedSegments splits a day at the start of its month's ramp: the base
// rate before it, a slope after it that reaches the peak at the month's end.
func mixedSegments(m *Mixed, day calendarDay) []rateSegment {
	monthEnd := day.monthDay(1, 1)
	rampStart := day.monthDay(1, 1-m.RampDays)
	rate := func(t time.Duration) float64 {
		if t < rampStart {
			return m.Base * m.PeakRate
		}
		f := float64(t-rampStart) / float64(monthEnd-rampStart)
		return (m.Base + (1-m.Base)*f) * m.PeakRate
	}
	split := day.clamp(rampStart)
	return []rateSegment{
		{day.from, split, rate(day.from), rate(day.from)},
		{split, day.to, rate(split), rate(day.to)},
	}
}

// expected is the mean number of jobs of each rhythm: exact for the
// pipelines, the integral of the rate for the others.
func (g Synthetic) expected() (periodic, pulse, mixed float64) {
	for day := range calendarDays(g.Start, g.Span) {
		for _, p := range g.Periodic {
			if at := day.at(p.At); (!p.Weekly || day.midnight.Weekday() == p.Weekday) && at >= day.from && at < day.to {
				periodic += float64(p.Jobs)
			}
		}
		if g.Pulse != nil {
			for _, s := range pulseSegments(g.Pulse, day) {
				pulse += s.expected()
			}
		}
		if g.Mixed != nil {
			for _, s := range mixedSegments(g.Mixed, day) {
				mixed += s.expected()
			}
		}
	}
	return periodic, pulse, mixed
}

// mergeBySubmit appends the jobs of sorted parts to dst in Submit order;
// equal times take the earlier part first.
func mergeBySubmit(dst []Job, parts ...[]Job) []Job {
	for {
		best := -1
		for i, p := range parts {
			if len(p) > 0 && (best < 0 || p[0].Submit < parts[best][0].Submit) {
				best = i
			}
		}
		if best < 0 {
			return dst
		}
		dst = append(dst, parts[best][0])
		parts[best] = parts[best][1:]
	}
}
