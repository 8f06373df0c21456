package trace

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin on machines without zoneinfo

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func generate(t testing.TB, g Synthetic) Trace {
	t.Helper()
	tr, err := Generate(g)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestGenerateIsDeterministic(t *testing.T) {
	a := generate(t, DefaultSynthetic(20_000, 7))
	b := generate(t, DefaultSynthetic(20_000, 7))
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed gave different traces")
	}
	c := generate(t, DefaultSynthetic(20_000, 8))
	// Not merely different somewhere: the random rhythms differ throughout.
	same := 0
	for i := range min(len(a.Jobs), len(c.Jobs)) {
		if reflect.DeepEqual(a.Jobs[i], c.Jobs[i]) {
			same++
		}
	}
	if same > len(a.Jobs)/10 {
		t.Errorf("%d of %d jobs are equal across seeds 7 and 8", same, len(a.Jobs))
	}
}

func TestGenerateRhythmsAreIndependent(t *testing.T) {
	all := DefaultSynthetic(5_000, 3)
	noPulse := DefaultSynthetic(5_000, 3)
	noPulse.Pulse = nil
	a, b := generate(t, all), generate(t, noPulse)
	if len(b.Jobs) >= len(a.Jobs) {
		t.Fatalf("turning the pulse off left %d of %d jobs", len(b.Jobs), len(a.Jobs))
	}
	// Each rhythm has its own random stream, so the periodic and mixed jobs
	// are exactly those of the full trace, in the same order.
	i := 0
	for _, j := range a.Jobs {
		if i < len(b.Jobs) && reflect.DeepEqual(j, b.Jobs[i]) {
			i++
		}
	}
	if i != len(b.Jobs) {
		t.Errorf("only %d of %d periodic and mixed jobs survived turning the pulse off", i, len(b.Jobs))
	}
}

func TestGenerateDefaultHitsTarget(t *testing.T) {
	const target = 100_000
	tr := generate(t, DefaultSynthetic(target, 1))
	if n := len(tr.Jobs); n < target*97/100 || n > target*103/100 {
		t.Errorf("%d jobs for a target of %d", n, target)
	}
	var core, burst int
	for _, j := range tr.Jobs {
		if j.Submit%time.Millisecond != 0 || j.Submit >= 30*24*time.Hour {
			t.Fatalf("job %+v: submit not a millisecond within the span", j)
		}
		if j.Class == jobs.ClassCore {
			core++
		} else {
			burst++
		}
	}
	// 20% periodic.
	if share := float64(core) / float64(len(tr.Jobs)); share < 0.18 || share > 0.22 {
		t.Errorf("core share %.3f, want about 0.20", share)
	}
}

func TestGeneratePeriodicAtTimesOfDay(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// Noon on 2025-03-25 for 14 days: clocks spring forward on 30 March, so
	// a daily 06:00 is not a multiple of 24h from the start after that.
	g := Synthetic{
		Start:    time.Date(2025, 3, 25, 12, 0, 0, 0, berlin),
		Span:     14 * 24 * time.Hour,
		Duration: LogNormal{Median: time.Minute, Sigma: 0.5},
		Periodic: []Pipeline{
			{Template: "etl", Team: "data", At: 6 * time.Hour, Jobs: 3, Deadline: 2 * time.Hour},
			{Template: "retrain", Team: "ml", At: 22*time.Hour + 30*time.Minute, Weekly: true, Weekday: time.Wednesday, Jobs: 2, Slots: 8,
				Duration: LogNormal{Median: time.Hour}},
		},
	}
	tr := generate(t, g)
	counts := map[string]int{}
	for _, j := range tr.Jobs {
		at := tr.Start.Add(j.Submit).In(berlin)
		tod := time.Duration(at.Hour())*time.Hour + time.Duration(at.Minute())*time.Minute + time.Duration(at.Second())*time.Second
		counts[j.Template]++
		switch j.Template {
		case "etl":
			if tod != 6*time.Hour || j.Deadline != 2*time.Hour {
				t.Errorf("etl job at %v, deadline %v", at, j.Deadline)
			}
		case "retrain":
			if tod != 22*time.Hour+30*time.Minute || at.Weekday() != time.Wednesday || j.Slots != 8 || j.Duration != time.Hour {
				t.Errorf("retrain job at %v (%v), %d slots, %v", at, at.Weekday(), j.Slots, j.Duration)
			}
		}
		if j.Class != jobs.ClassCore || j.Checkpointable {
			t.Errorf("periodic job %+v is not a plain core job", j)
		}
	}
	// 06:00 on 26 March to 8 April (the first day's 06:00 is before noon,
	// the span ends 8 April 13:00); Wednesdays 26 March and 2 April.
	if want := map[string]int{"etl": 14 * 3, "retrain": 2 * 2}; !reflect.DeepEqual(counts, want) {
		t.Errorf("counts %v, want %v", counts, want)
	}
}

func TestGeneratePulseRisesInWorkingHours(t *testing.T) {
	p := Pulse{OffRate: 10, WorkRate: 50, Checkpointable: 0.25}
	g := Synthetic{
		Seed:      11,
		Start:     time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC), // a Monday
		Span:      28 * 24 * time.Hour,
		Duration:  LogNormal{Median: time.Minute},
		Teams:     []string{"a"},
		Templates: []string{"x"},
		Pulse:     &p,
	}
	tr := generate(t, g)
	var work, off, ckpt int
	for _, j := range tr.Jobs {
		at := tr.Start.Add(j.Submit)
		weekday := at.Weekday() != time.Saturday && at.Weekday() != time.Sunday
		if weekday && at.Hour() >= 9 && at.Hour() < 18 {
			work++
		} else {
			off++
		}
		if j.Class != jobs.ClassBurst {
			t.Fatalf("pulse job %+v is not burst", j)
		}
		if j.Checkpointable {
			ckpt++
		}
	}
	workHours := 20.0 * 9
	offHours := 28*24 - workHours
	workRate, offRate := float64(work)/workHours, float64(off)/offHours
	if math.Abs(workRate-50) > 2.5 || math.Abs(offRate-10) > 0.7 {
		t.Errorf("%.1f jobs/h in working hours and %.1f outside, want 50 and 10", workRate, offRate)
	}
	if share := float64(ckpt) / float64(len(tr.Jobs)); math.Abs(share-0.25) > 0.02 {
		t.Errorf("checkpointable share %.3f, want 0.25", share)
	}
}

func TestGenerateMixedPeaksAtMonthEnd(t *testing.T) {
	g := Synthetic{
		Seed:      5,
		Start:     time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC),
		Span:      61 * 24 * time.Hour, // April and May
		Duration:  LogNormal{Median: time.Minute},
		Teams:     []string{"a"},
		Templates: []string{"x"},
		Mixed:     &Mixed{PeakRate: 100},
	}
	tr := generate(t, g)
	perDay := make([]float64, 61)
	for _, j := range tr.Jobs {
		perDay[j.Submit/(24*time.Hour)]++
	}
	mean := func(days []float64) float64 {
		s := 0.0
		for _, d := range days {
			s += d
		}
		return s / float64(len(days))
	}
	aprilBase, mayBase := mean(perDay[0:20]), mean(perDay[30:50])
	// The base is 30% of 100 jobs/h.
	for _, base := range []float64{aprilBase, mayBase} {
		if math.Abs(base-720) > 25 {
			t.Errorf("base %.0f jobs/day, want 720 (30%% of the peak)", base)
		}
	}
	// The last day of a 5-day ramp from 30% averages 93% of the peak: about
	// 3x the base. May 1 drops back to the base.
	for _, c := range []struct {
		name string
		day  int
	}{{"30 April", 29}, {"31 May", 60}} {
		if ratio := perDay[c.day] / aprilBase; ratio < 2.8 || ratio > 3.4 {
			t.Errorf("%s: %.0f jobs, %.2fx the base, want about 3x", c.name, perDay[c.day], ratio)
		}
	}
	if ratio := perDay[30] / aprilBase; ratio > 1.2 {
		t.Errorf("1 May: %.2fx the base, want the base again", ratio)
	}
	// The ramp is linear: day 26 of April (ramp day 1) averages 37%, day 28
	// 65%, as fractions of the peak.
	for day, f := range map[int]float64{25: 0.37, 27: 0.65} {
		if got := perDay[day] / 2400; math.Abs(got-f) > 0.05 {
			t.Errorf("day %d at %.2f of the peak, want %.2f", day+1, got, f)
		}
	}
}

func TestLogNormalSample(t *testing.T) {
	g := Synthetic{
		Seed:      2,
		Start:     time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC),
		Span:      10 * 24 * time.Hour,
		Duration:  LogNormal{Median: 10 * time.Minute, Sigma: 1, Max: 2 * time.Hour},
		Slots:     []SlotWeight{{1, 6}, {4, 3}, {8, 1}, {16, 0}},
		Teams:     []string{"a"},
		Templates: []string{"x"},
		Pulse:     &Pulse{OffRate: 200, WorkRate: 200},
	}
	tr := generate(t, g)
	ds := make([]time.Duration, len(tr.Jobs))
	slots := map[int]int{}
	for i, j := range tr.Jobs {
		ds[i] = j.Duration
		slots[j.Slots]++
		if j.Duration > 2*time.Hour || j.Duration%time.Millisecond != 0 {
			t.Fatalf("duration %v is over the cap or not whole milliseconds", j.Duration)
		}
	}
	slices.Sort(ds)
	n := float64(len(ds))
	if med := ds[len(ds)/2]; med < 9*time.Minute+40*time.Second || med > 10*time.Minute+20*time.Second {
		t.Errorf("median %v, want 10m", med)
	}
	// One sigma above the median is the 84th percentile; 2h is 2.48 sigmas
	// (0.66% of samples, all clamped to it).
	above, capped := 0, 0
	oneSigma := float64(10*time.Minute) * math.E
	for _, d := range ds {
		if float64(d) > oneSigma {
			above++
		}
		if d == 2*time.Hour {
			capped++
		}
	}
	if share := float64(above) / n; math.Abs(share-0.1587) > 0.01 {
		t.Errorf("%.4f above median*e, want 0.1587", share)
	}
	if share := float64(capped) / n; math.Abs(share-0.0066) > 0.002 {
		t.Errorf("%.4f at the cap, want 0.0066", share)
	}
	for s, w := range map[int]float64{1: 0.6, 4: 0.3, 8: 0.1} {
		if share := float64(slots[s]) / n; math.Abs(share-w) > 0.01 {
			t.Errorf("%d slots: share %.3f, want %.1f", s, share, w)
		}
	}
	if slots[16] != 0 {
		t.Errorf("a zero-weight slot count was drawn %d times", slots[16])
	}
}

func TestGenerateRejectsBadSynthetics(t *testing.T) {
	ok := func() Synthetic {
		return Synthetic{
			Start: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), Span: 24 * time.Hour,
			Duration: LogNormal{Median: time.Minute}, Teams: []string{"a"}, Templates: []string{"x"},
			Pulse: &Pulse{OffRate: 1},
		}
	}
	if _, err := Generate(ok()); err != nil {
		t.Fatalf("the base case fails: %v", err)
	}
	for want, mutate := range map[string]func(*Synthetic){
		"start: required":             func(g *Synthetic) { g.Start = time.Time{} },
		"span:":                       func(g *Synthetic) { g.Span = 0 },
		"rhythms: none is on":         func(g *Synthetic) { g.Pulse = nil },
		"teams, templates":            func(g *Synthetic) { g.Teams = nil },
		"pulse: rates":                func(g *Synthetic) { g.Pulse.OffRate = 0 },
		"pulse: working hours":        func(g *Synthetic) { g.Pulse.WorkStart, g.Pulse.WorkEnd = 18*time.Hour, 9*time.Hour },
		"pulse.duration: median":      func(g *Synthetic) { g.Duration = LogNormal{} },
		"pulse.duration: sigma":       func(g *Synthetic) { g.Duration.Sigma = math.NaN() },
		"slots: the weights sum to 0": func(g *Synthetic) { g.Slots = []SlotWeight{{2, 0}} },
		"mixed.base":                  func(g *Synthetic) { g.Mixed = &Mixed{PeakRate: 1, Base: 2} },
		"periodic[0].at":              func(g *Synthetic) { g.Periodic = []Pipeline{{Template: "t", Team: "a", At: 24 * time.Hour, Jobs: 1}} },
		"periodic[0].jobs":            func(g *Synthetic) { g.Periodic = []Pipeline{{Template: "t", Team: "a"}} },
		"more than 16777216":          func(g *Synthetic) { g.Pulse.OffRate = 1e9 },
	} {
		g := ok()
		mutate(&g)
		if _, err := Generate(g); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error with %q, got %v", want, err)
		}
	}
}

func TestGenerateLeavesCallerValuesAlone(t *testing.T) {
	p := &Pulse{OffRate: 1}
	g := Synthetic{Start: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), Span: time.Hour,
		Duration: LogNormal{Median: time.Minute}, Teams: []string{"a"}, Templates: []string{"x"}, Pulse: p}
	generate(t, g)
	if *p != (Pulse{OffRate: 1}) {
		t.Errorf("Generate filled the caller's Pulse: %+v", *p)
	}
}

// TestGenerateMillionFitsBudget checks the allocation budget of a million
// jobs (300 MB), which unlike time does not depend on the machine.
func TestGenerateMillionFitsBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a million jobs")
	}
	g := DefaultSynthetic(1_000_000, 1)
	allocated := allocatedBytes(func() { generate(t, g) })
	if allocated > 300<<20 {
		t.Errorf("Generate allocated %d MB, budget 300 MB", allocated>>20)
	}
}
