package advisor

import (
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
)

// t0 is the start of every test window: a Monday, in UTC so the RFC 3339
// times in the texts are predictable.
var t0 = time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)

// at is t0 plus hours, minutes and seconds.
func at(h, m, s int) time.Time {
	return t0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
}

// balanced is a day on which nothing needs changing: elastic waits of a
// minute or two twice an hour, the quota 20% idle, the design's watermarks,
// elastic at 3x fixed (break-even 8 h/day), a core template busy 12 h/day
// and a burst one 2 h/day. Each rule's test breaks one of these.
func balanced() Window {
	w := Window{
		From: t0, Until: t0.Add(24 * time.Hour),
		Prices: planner.Prices{FixedPerSlotHour: 1, ElasticPerSlotHour: 3},
		High:   0.70, Low: 0.40,
		FixedSlots: 20,
		Templates: []TemplateHours{
			{Template: "etl", Class: "core", ActiveHoursPerDay: 12, SlotHoursPerDay: 48, Days: 14},
			{Template: "adhoc", Class: "burst", ActiveHoursPerDay: 2, SlotHoursPerDay: 6, Days: 14},
		},
		MinDemand: 14,
	}
	for h := range 24 {
		w.ElasticWaits = append(w.ElasticWaits,
			Wait{At: at(h, 15, 0), Class: "burst", Wait: time.Minute},
			Wait{At: at(h, 45, 0), Class: "burst", Wait: 2 * time.Minute})
		w.FixedIdle = append(w.FixedIdle, Sample{At: at(h, 0, 0), Value: 0.20})
	}
	return w
}

// kinds lists the kinds of rs in order.
func kinds(rs []Recommendation) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Kind)
	}
	return out
}

// only asserts that rs is exactly one recommendation of kind and returns it.
func only(t *testing.T, rs []Recommendation, kind string) Recommendation {
	t.Helper()
	if len(rs) != 1 || rs[0].Kind != kind {
		t.Fatalf("got kinds %v, want exactly [%s]", kinds(rs), kind)
	}
	return rs[0]
}

// ofKind returns the recommendations of kind.
func ofKind(rs []Recommendation, kind string) []Recommendation {
	return slices.DeleteFunc(slices.Clone(rs), func(r Recommendation) bool { return r.Kind != kind })
}

// near says whether two figures agree to float noise.
func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
