package planner

import (
	"math"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// curve builds a one-hour-step curve from hourly demand.
func curve(hourly ...int) Curve { return Curve{Step: time.Hour, Samples: hourly} }

func TestRuleOfThumbIsMinimumHourlyDemandTimes1Point2(t *testing.T) {
	for _, tc := range []struct {
		c    Curve
		want int
	}{
		{curve(10, 12, 30, 10), 12},
		{curve(5, 5, 5), 6},   // 6.0 exactly, not 7
		{curve(0, 40, 40), 0}, // an idle hour means no base load
		{curve(), 0},
	} {
		if got := RuleOfThumb(tc.c); got != tc.want {
			t.Errorf("RuleOfThumb(%v) = %d, want %d", tc.c.Samples, got, tc.want)
		}
	}
	// Minute samples are averaged per hour first: a single idle minute is
	// not the base load.
	m := Curve{Step: time.Minute}
	for i := 0; i < 120; i++ {
		m.Samples = append(m.Samples, 10)
	}
	m.Samples[30] = 0
	if got := RuleOfThumb(m); got != 12 {
		t.Errorf("one idle minute: %d, want 12 (hourly average 9.83 x 1.2 = 11.8 -> 12)", got)
	}
}

func TestCostOptimalIsTheQuantileWherePricesBalance(t *testing.T) {
	// Demand: 10 slots all day, 20 for 8 hours, 30 for 2 hours (24 samples).
	var h []int
	for i := 0; i < 24; i++ {
		switch {
		case i < 2:
			h = append(h, 30)
		case i < 8:
			h = append(h, 20)
		default:
			h = append(h, 10)
		}
	}
	c := curve(h...)
	for _, tc := range []struct {
		fixed, elastic float64
		want           int
	}{
		{1, 3, 20},  // ratio 1/3: demand >= 20 for 8/24 = 1/3 of the time: slot 20 just pays
		{1, 2, 10},  // ratio 1/2: demand >= 11 only 8/24 of the time
		{1, 12, 30}, // ratio 1/12: demand >= 30 for 2/24 = 1/12
		{1, 1, 0},   // no saving from fixed at all
	} {
		p := Prices{FixedPerSlotHour: tc.fixed, ElasticPerSlotHour: tc.elastic}
		got := CostOptimal(c, p)
		if got != tc.want {
			t.Errorf("prices %g/%g: %d, want %d", tc.fixed, tc.elastic, got, tc.want)
		}
		// It is the cheapest quota by the closed form, within one slot's ties.
		best, bestCost := -1, math.Inf(1)
		for q := 0; q <= 31; q++ {
			f, e := CostOf(c, q, p)
			if f+e < bestCost-1e-9 {
				best, bestCost = q, f+e
			}
		}
		if f, e := CostOf(c, got, p); math.Abs(f+e-bestCost) > 1e-9 {
			t.Errorf("prices %g/%g: quota %d costs %g, the cheapest (%d) %g", tc.fixed, tc.elastic, got, f+e, best, bestCost)
		}
	}
}

func TestTemplatesCompareActiveHoursWithTheBreakEven(t *testing.T) {
	day := 24 * time.Hour
	var tr trace.Trace
	// Over two days: "etl" runs 10 h a day as two overlapping jobs (merged:
	// 0-6 h and 4-10 h = 10 h); "adhoc" runs 2 h a day; "train" is burst
	// and runs 12 h a day.
	for d := time.Duration(0); d < 2; d++ {
		tr.Jobs = append(tr.Jobs,
			trace.Job{Submit: d * day, Duration: 6 * time.Hour, Slots: 2, Class: jobs.ClassCore, Template: "etl"},
			trace.Job{Submit: d*day + 4*time.Hour, Duration: 6 * time.Hour, Slots: 1, Class: jobs.ClassCore, Template: "etl"},
			trace.Job{Submit: d*day + time.Hour, Duration: 2 * time.Hour, Slots: 1, Class: jobs.ClassCore, Template: "adhoc"},
			trace.Job{Submit: d*day + 12*time.Hour, Duration: 12 * time.Hour, Slots: 1, Class: jobs.ClassBurst, Template: "train"},
		)
	}
	trace.SortJobs(tr.Jobs)
	p := Prices{FixedPerSlotHour: 1, ElasticPerSlotHour: 2} // break-even 12 h
	got := map[string]TemplateUse{}
	for _, u := range Templates(tr, p) {
		got[u.Template] = u
	}
	check := func(name string, active, slotHours float64, belongs, rule string, moves bool) {
		t.Helper()
		u := got[name]
		if math.Abs(u.ActiveHoursPerDay-active) > 1e-9 || math.Abs(u.SlotHoursPerDay-slotHours) > 1e-9 ||
			u.Belongs != belongs || u.RuleOfThumb != rule || u.Moves != moves || u.BreakEvenHours != 12 {
			t.Errorf("%s: %+v", name, u)
		}
	}
	check("etl", 10, 18, "elastic", "fixed", true)    // core, but 10 h < 12 h break-even at a 2x price
	check("adhoc", 2, 2, "elastic", "elastic", true)  // core, rarely busy
	check("train", 12, 12, "elastic", "fixed", false) // exactly the break-even is not over it
	if us := Templates(tr, Prices{FixedPerSlotHour: 1, ElasticPerSlotHour: 3}); us[0].Template != "etl" || us[0].Belongs != "fixed" {
		t.Errorf("at a 3x price etl (10 h > 8 h) belongs on fixed: %+v", us[0])
	}
}

// TestTemplatesCountGangMembers: a gang's slot-hours are every member's,
// as Trace.Demand counts them.
func TestTemplatesCountGangMembers(t *testing.T) {
	tr := trace.Trace{Jobs: []trace.Job{{Duration: 2 * time.Hour, Slots: 2, Replicas: 3, Class: jobs.ClassBurst, Template: "gang"}}}
	us := Templates(tr, Prices{FixedPerSlotHour: 1, ElasticPerSlotHour: 2})
	// 3 members x 2 slots x 2 h = 12 slot-hours in a span of 2 h, 1/12 of a day.
	if len(us) != 1 || math.Abs(us[0].SlotHoursPerDay-12*12) > 1e-9 {
		t.Errorf("%+v", us)
	}
}

func TestPricesOfPrefersOnDemandThenSpot(t *testing.T) {
	od := policy.Pool{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 3}
	od2 := policy.Pool{Name: "od2", Kind: policy.PoolOnDemand, PricePerSlotHour: 2.5}
	spot := policy.Pool{Name: "spot", Kind: policy.PoolSpot, PricePerSlotHour: 1.2}
	fixed := policy.Pool{Name: "fx", Kind: policy.PoolFixed, PricePerSlotHour: 1}
	if p, err := PricesOf([]policy.Pool{fixed, od, spot, od2}, 0); err != nil || p != (Prices{1, 2.5}) {
		t.Errorf("with on-demand: %+v %v", p, err)
	}
	if p, err := PricesOf([]policy.Pool{spot}, 0.8); err != nil || p != (Prices{0.8, 1.2}) {
		t.Errorf("spot only, fixed price given apart: %+v %v", p, err)
	}
	if _, err := PricesOf([]policy.Pool{fixed}, 0); err == nil {
		t.Error("no elastic pool was accepted")
	}
}
