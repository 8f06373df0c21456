package planner

import (
	"cmp"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// TemplateUse is how much one template runs, and where it belongs.
type TemplateUse struct {
	Template string `json:"template"`
	// Class is the class most of its jobs have.
	Class jobs.Class `json:"class"`
	Jobs  int        `json:"jobs"`
	// ActiveHoursPerDay is how many hours a day at least one of its jobs
	// runs (jobs started at submission): what the break-even compares.
	ActiveHoursPerDay float64 `json:"active_hours_per_day"`
	// SlotHoursPerDay is the work itself: slots x hours, per day, with
	// every member of a gang counted.
	SlotHoursPerDay float64 `json:"slot_hours_per_day"`
	// BreakEvenHours is 24 h x fixed / elastic price.
	BreakEvenHours float64 `json:"break_even_hours"`
	// Belongs is "fixed" when ActiveHoursPerDay is over the break-even,
	// else "elastic".
	Belongs string `json:"belongs"`
	// RuleOfThumb is what the source's fixed 8 h rule says, shown beside
	// Belongs because it only agrees when elastic costs 3x fixed.
	RuleOfThumb string `json:"rule_of_thumb"`
	// Moves is true when Belongs disagrees with Class: a core template
	// that would be cheaper elastic, or a burst one that should be fixed.
	Moves bool `json:"moves"`
}

// ruleOfThumbHours is the source's threshold: over 8 hours a day belongs on fixed.
const ruleOfThumbHours = 8

// Templates sums tr per template, busiest first.
func Templates(tr trace.Trace, p Prices) []TemplateUse {
	type acc struct {
		jobs, core int
		slotTime   time.Duration
		active     time.Duration
		openEnd    time.Duration // end of the merged interval being built
		openStart  time.Duration
		open       bool
	}
	by := map[string]*acc{}
	// Jobs are sorted by Submit, so each template's intervals arrive in
	// start order and merge in one pass.
	for _, j := range tr.Jobs {
		a := by[j.Template]
		if a == nil {
			a = &acc{}
			by[j.Template] = a
		}
		a.jobs++
		if j.Class == jobs.ClassCore {
			a.core++
		}
		a.slotTime += time.Duration(j.TotalSlots()) * j.Duration // every member of a gang
		start, end := j.Submit, j.Submit+j.Duration
		switch {
		case !a.open:
			a.openStart, a.openEnd, a.open = start, end, true
		case start <= a.openEnd:
			a.openEnd = max(a.openEnd, end)
		default:
			a.active += a.openEnd - a.openStart
			a.openStart, a.openEnd = start, end
		}
	}
	days := max(tr.Span().Hours()/24, 1.0/24)
	out := make([]TemplateUse, 0, len(by))
	for name, a := range by {
		if a.open {
			a.active += a.openEnd - a.openStart
		}
		u := TemplateUse{Template: name, Jobs: a.jobs, Class: jobs.ClassBurst,
			ActiveHoursPerDay: a.active.Hours() / days, SlotHoursPerDay: a.slotTime.Hours() / days,
			BreakEvenHours: p.BreakEvenHours(), Belongs: "elastic", RuleOfThumb: "elastic"}
		if 2*a.core > a.jobs {
			u.Class = jobs.ClassCore
		}
		if u.ActiveHoursPerDay > u.BreakEvenHours {
			u.Belongs = "fixed"
		}
		if u.ActiveHoursPerDay > ruleOfThumbHours {
			u.RuleOfThumb = "fixed"
		}
		u.Moves = (u.Belongs == "fixed") != (u.Class == jobs.ClassCore)
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b TemplateUse) int {
		if c := cmp.Compare(b.SlotHoursPerDay, a.SlotHoursPerDay); c != 0 {
			return c
		}
		return cmp.Compare(a.Template, b.Template)
	})
	return out
}
