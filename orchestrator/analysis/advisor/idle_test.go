package advisor

import (
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
)

// halfIdle is a 20-slot quota 60% idle for 12 hours (8 slots busy) and 20%
// idle for 12 (16 busy): 40% idle on average. Slots 1-8 are busy all the
// time, 9-16 half of it, 17-20 never.
func halfIdle() Window {
	w := balanced()
	w.MinDemand = 8
	for i := range w.FixedIdle {
		w.FixedIdle[i].Value = 0.2
		if i < 12 {
			w.FixedIdle[i].Value = 0.6
		}
	}
	return w
}

func TestIdleQuotaShrinksToTheBreakEven(t *testing.T) {
	r := only(t, Advise(halfIdle()), KindFixedIdle)
	ev := r.Evidence.Idle
	// Elastic at 3x: a slot pays if busy a third of the time. Slots 9-16
	// are busy half of it, so 16 stay; the mean alone would say
	// ceil(20 x 0.6) = 12, the rule of thumb ceil(8 x 1.2) = 10.
	if ev == nil || !near(ev.MeanIdle, 0.4) || ev.Samples != 24 || ev.Covered != 24*time.Hour ||
		!near(ev.MeanBusySlots, 12) || ev.MeanBusyQuota != 12 || !near(ev.BreakEvenShare, 1.0/3) ||
		ev.BreakEvenQuota != 16 || ev.RuleOfThumbQuota != 10 || ev.Suggested != 16 || ev.FixedSlots != 20 {
		t.Fatalf("evidence %+v", ev)
	}
	for _, s := range []string{"40%", "from 20 to 16 slots", "only 16 slots were busy at least 33%"} {
		if !strings.Contains(r.Action, s) {
			t.Errorf("action %q does not mention %q", r.Action, s)
		}
	}
	if !strings.Contains(r.RuleOfThumb, "8.0 x 1.2 = 10") || !strings.Contains(r.RuleOfThumb, "12") {
		t.Errorf("rule of thumb %q", r.RuleOfThumb)
	}
}

func TestIdleBreakEvenFollowsThePrices(t *testing.T) {
	w := halfIdle()
	// Fixed at 60% of elastic: slots busy half the time no longer pay.
	w.Prices = planner.Prices{FixedPerSlotHour: 3, ElasticPerSlotHour: 5}
	rs := ofKind(Advise(w), KindFixedIdle)
	if len(rs) != 1 || rs[0].Evidence.Idle.Suggested != 8 || !strings.Contains(rs[0].Action, "from 20 to 8 slots") {
		t.Fatalf("got %+v", rs)
	}
	// Without prices the mean busy slots size it.
	w.Prices = planner.Prices{}
	rs = ofKind(Advise(w), KindFixedIdle)
	if len(rs) != 1 || rs[0].Evidence.Idle.Suggested != 12 || rs[0].Evidence.Idle.BreakEvenQuota != 0 {
		t.Fatalf("without prices got %+v", rs)
	}
}

func TestIdleQuotaBusyInSpellsIsKept(t *testing.T) {
	// Full for 12 hours, empty for 12: half idle, yet each slot is busy
	// half the time, over the third that pays.
	w := balanced()
	for i := range w.FixedIdle {
		w.FixedIdle[i].Value = 0
		if i >= 12 {
			w.FixedIdle[i].Value = 1
		}
	}
	r := only(t, Advise(w), KindFixedIdle)
	if ev := r.Evidence.Idle; !near(ev.MeanIdle, 0.5) || ev.Suggested != 20 || ev.BreakEvenQuota != 20 {
		t.Errorf("evidence %+v", ev)
	}
	if !strings.HasPrefix(r.Action, "Keep the fixed quota at 20 slots") || !strings.Contains(r.Action, "50%") {
		t.Errorf("action %q", r.Action)
	}
}

func TestIdleMeanIsWeightedByTime(t *testing.T) {
	// 80% idle for one hour, then 20% for three: (0.8 + 3 x 0.2) / 4 =
	// 0.35, where the plain mean of the two readings would be 0.5. A
	// reading before the window counts for nothing.
	w := balanced()
	w.Until = at(4, 0, 0)
	w.FixedIdle = []Sample{{At: at(1, 0, 0), Value: 0.2}, {At: at(0, 0, 0), Value: 0.8}, {At: t0.Add(-time.Hour), Value: 1}}
	rs := ofKind(Advise(w), KindFixedIdle)
	if len(rs) != 1 || !near(rs[0].Evidence.Idle.MeanIdle, 0.35) || rs[0].Evidence.Idle.Covered != 4*time.Hour {
		t.Fatalf("got %+v", rs)
	}
	if !strings.Contains(rs[0].Action, "35%") {
		t.Errorf("action %q", rs[0].Action)
	}
}

func TestIdleThresholdOption(t *testing.T) {
	if rs := (Options{MaxIdle: 0.45}).Advise(halfIdle()); len(ofKind(rs, KindFixedIdle)) != 0 {
		t.Error("40% idle fired over a 45% threshold")
	}
	// The balanced day is 20% idle.
	rs := ofKind(Options{MaxIdle: 0.15}.Advise(balanced()), KindFixedIdle)
	if len(rs) != 1 || !near(rs[0].Evidence.Idle.Threshold, 0.15) || !strings.Contains(rs[0].Action, "over 15%") {
		t.Fatalf("20%% idle over a 15%% threshold: %+v", rs)
	}
}

func TestTinyIdleQuotaWithoutPricesIsLeftAlone(t *testing.T) {
	// One slot, half idle: the mean rounds up to the one slot there is,
	// and without prices no break-even says whether it pays.
	w := balanced()
	w.Prices = planner.Prices{}
	w.FixedSlots = 1
	for i := range w.FixedIdle {
		w.FixedIdle[i].Value = 0.5
	}
	only(t, Advise(w), KindPrices)
}

// TestAQuotaIsNotJudgedOnMinutes: the same idle quota seen for only the
// last 50 minutes of the window (a controller just started) is left alone;
// from an hour on it is judged.
func TestAQuotaIsNotJudgedOnMinutes(t *testing.T) {
	w := halfIdle()
	w.FixedIdle = []Sample{{At: w.Until.Add(-50 * time.Minute), Value: 0.8}}
	if recs := Advise(w); len(ofKind(recs, KindFixedIdle)) > 0 {
		t.Fatalf("50 minutes of samples judged the quota: %+v", recs)
	}
	w.FixedIdle = []Sample{{At: w.Until.Add(-time.Hour), Value: 0.8}}
	only(t, Advise(w), KindFixedIdle)
}
