package planner

import (
	"math"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

func TestDemandLevelsAreExactNotSampled(t *testing.T) {
	// 0-10 min: 2 slots; 10-10.5 min: 2 + 3 = 5 slots (a 30 s job a
	// minute sample would miss); 10.5-20 min: 2 slots; then nothing till
	// 30 min, and 1 slot for 30-40 min.
	tr := trace.Trace{Jobs: []trace.Job{
		{Submit: 0, Duration: 20 * time.Minute, Slots: 2, Class: jobs.ClassCore},
		{Submit: 10 * time.Minute, Duration: 30 * time.Second, Slots: 3, Class: jobs.ClassBurst},
		{Submit: 30 * time.Minute, Duration: 10 * time.Minute, Slots: 1, Class: jobs.ClassBurst},
	}}
	l := DemandLevels(tr)
	want := []time.Duration{10 * time.Minute, 10 * time.Minute, 19*time.Minute + 30*time.Second, 0, 0, 30 * time.Second}
	if len(l.Time) != len(want) || l.Span != 40*time.Minute || l.Peak() != 5 {
		t.Fatalf("levels %v span %v peak %d", l.Time, l.Span, l.Peak())
	}
	for k := range want {
		if l.Time[k] != want[k] {
			t.Errorf("time at %d slots: %v, want %v", k, l.Time[k], want[k])
		}
	}
}

func TestOfflineOptimumIsTheCheapestQuotaByBruteForce(t *testing.T) {
	// A day: 4 slots all day, 10 slots for 6 hours, 16 slots for 1 hour.
	h := time.Hour
	tr := trace.Trace{Jobs: []trace.Job{
		{Submit: 0, Duration: 24 * h, Slots: 4, Class: jobs.ClassCore},
		{Submit: 8 * h, Duration: 6 * h, Slots: 6, Class: jobs.ClassBurst},
		{Submit: 10 * h, Duration: h, Slots: 6, Class: jobs.ClassBurst},
	}}
	l := DemandLevels(tr)
	for _, tc := range []struct {
		elastic float64
		want    int
	}{
		// Slot 5..10 is busy 6 h of 24: it pays when elastic > 4x fixed.
		{3, 4},  // 6/24 < 1/3: stay at the base
		{5, 10}, // 6/24 > 1/5
		{30, 16},
		{1, 0}, // fixed is never cheaper
	} {
		p := Prices{FixedPerSlotHour: 1, ElasticPerSlotHour: tc.elastic}
		o := OfflineOptimum(l, p)
		if o.FixedSlots != tc.want {
			t.Errorf("elastic %g: optimum %d slots, want %d", tc.elastic, o.FixedSlots, tc.want)
		}
		best := math.Inf(1)
		for q := 0; q <= 20; q++ {
			f, e := l.CostAt(q, p)
			best = math.Min(best, f+e)
		}
		// Worked by hand at elastic 5: 10 slots x 24 h + 5 x 6 slot-h = 270.
		if math.Abs(o.Cost-best) > 1e-9 || math.Abs(o.Fixed+o.Elastic-o.Cost) > 1e-9 {
			t.Errorf("elastic %g: optimum %+v, brute force %g", tc.elastic, o, best)
		}
		if tc.elastic == 5 && math.Abs(o.Cost-270) > 1e-9 {
			t.Errorf("elastic 5: cost %g, want 270 by hand", o.Cost)
		}
	}
}
