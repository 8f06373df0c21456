package advisor

import (
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestBurstTemplateOverBreakEvenGoesFixed(t *testing.T) {
	w := balanced()
	w.Templates = append(w.Templates, TemplateHours{Template: "render", Class: "burst", ActiveHoursPerDay: 10, SlotHoursPerDay: 40, Days: 14})
	r := only(t, Advise(w), KindTemplateToFixed)
	ev := r.Evidence.Template
	// 40 slot-hours over 10 active hours: 4 slots. Elastic at 3x: 8 h.
	if ev == nil || ev.Template != "render" || ev.Slots != 4 || !near(ev.BreakEvenHours, 8) ||
		!near(ev.ElasticOverFixed, 3) || ev.RuleOfThumbHours != 8 || ev.RuleOfThumbSays != "fixed" ||
		!ev.RuleOfThumbAgrees || ev.Days != 14 {
		t.Fatalf("evidence %+v", ev)
	}
	for _, s := range []string{`"render"`, "about 4 slots", "10.0 h/day", "break-even 8.0 h/day"} {
		if !strings.Contains(r.Action, s) {
			t.Errorf("action %q does not mention %q", r.Action, s)
		}
	}
	for _, s := range []string{"over 8 h/day belongs on fixed", "only holds when elastic costs about 3x fixed", "24 x 1 / 3 = 8.0 h/day", "agrees"} {
		if !strings.Contains(r.RuleOfThumb, s) {
			t.Errorf("rule of thumb %q does not say %q", r.RuleOfThumb, s)
		}
	}
}

func TestCoreTemplateUnderBreakEvenCouldGoElastic(t *testing.T) {
	w := balanced()
	w.Templates = append(w.Templates, TemplateHours{Template: "report", Class: "core", ActiveHoursPerDay: 5, SlotHoursPerDay: 10, Days: 14})
	r := only(t, Advise(w), KindTemplateToElastic)
	if ev := r.Evidence.Template; ev.Slots != 2 || ev.RuleOfThumbSays != "elastic" || !ev.RuleOfThumbAgrees {
		t.Errorf("evidence %+v", ev)
	}
	for _, s := range []string{`"report"`, "5.0 h/day", "break-even 8.0 h/day", "about 2 slots"} {
		if !strings.Contains(r.Action, s) {
			t.Errorf("action %q does not mention %q", r.Action, s)
		}
	}
}

func TestBreakEvenComesFromThePricesNotTheRuleOfThumb(t *testing.T) {
	// Elastic at 2x fixed: break-even 12 h. A burst template at 10 h/day
	// stays elastic, though the 8 h rule says fixed; a core one at 10 h/day
	// should go elastic, and the rule of thumb gets it wrong.
	w := balanced()
	w.Prices = planner.Prices{FixedPerSlotHour: 1, ElasticPerSlotHour: 2}
	w.Templates = []TemplateHours{
		{Template: "render", Class: "burst", ActiveHoursPerDay: 10, SlotHoursPerDay: 40, Days: 14},
		{Template: "etl", Class: "core", ActiveHoursPerDay: 10, SlotHoursPerDay: 30, Days: 14},
	}
	r := only(t, Advise(w), KindTemplateToElastic)
	ev := r.Evidence.Template
	if ev.Template != "etl" || !near(ev.BreakEvenHours, 12) || !near(ev.ElasticOverFixed, 2) ||
		ev.RuleOfThumbSays != "fixed" || ev.RuleOfThumbAgrees {
		t.Fatalf("evidence %+v", ev)
	}
	for _, s := range []string{"2.00x fixed", "24 x 1 / 2 = 12.0 h/day", "gets this template wrong"} {
		if !strings.Contains(r.RuleOfThumb, s) {
			t.Errorf("rule of thumb %q does not say %q", r.RuleOfThumb, s)
		}
	}
}

func TestTemplateAtTheBreakEvenStays(t *testing.T) {
	// 0.1 / 0.3 x 24 is 8.000000000000002 in floats; 8 h is on it, not
	// under it, and stays where it is either way.
	w := balanced()
	w.Prices = planner.Prices{FixedPerSlotHour: 0.1, ElasticPerSlotHour: 0.3}
	w.Templates = []TemplateHours{
		{Template: "a", Class: "burst", ActiveHoursPerDay: 8, SlotHoursPerDay: 8, Days: 7},
		{Template: "b", Class: "core", ActiveHoursPerDay: 8, SlotHoursPerDay: 8, Days: 7},
		{Template: "new", Class: "burst", ActiveHoursPerDay: 20, SlotHoursPerDay: 20, Days: 0},
		{Template: "odd", Class: "batch", ActiveHoursPerDay: 20, SlotHoursPerDay: 20, Days: 7},
	}
	if rs := Advise(w); len(rs) != 0 {
		t.Errorf("got %v, want nothing", kinds(rs))
	}
}

func TestTemplatesFromPlanner(t *testing.T) {
	uses := []planner.TemplateUse{{Template: "render", Class: jobs.ClassBurst, ActiveHoursPerDay: 10, SlotHoursPerDay: 40}}
	got := TemplatesFrom(uses, 30)
	want := TemplateHours{Template: "render", Class: "burst", ActiveHoursPerDay: 10, SlotHoursPerDay: 40, Days: 30}
	if len(got) != 1 || got[0] != want {
		t.Errorf("TemplatesFrom = %+v, want [%+v]", got, want)
	}
}
