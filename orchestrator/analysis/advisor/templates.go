package advisor

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// ruleOfThumbHours is the source's threshold: over 8 hours a day belongs
// on fixed. It is the break-even only when elastic costs 3x fixed.
const ruleOfThumbHours = 8

// templateMoves advises moving each template that runs on the wrong side
// of the break-even: burst work active longer than it a day costs less on
// fixed quota, core work active less costs less on elastic. Largest work
// first, since it moves the most money; then by name, for a stable order.
func templateMoves(w Window) []Recommendation {
	if w.Prices.Validate() != nil {
		return nil // pricesMissing has said why
	}
	ts := slices.Clone(w.Templates)
	slices.SortStableFunc(ts, func(a, b TemplateHours) int {
		return cmp.Or(cmp.Compare(b.SlotHoursPerDay, a.SlotHoursPerDay),
			cmp.Compare(a.Template, b.Template), cmp.Compare(a.Class, b.Class),
			cmp.Compare(a.ActiveHoursPerDay, b.ActiveHoursPerDay), cmp.Compare(a.Days, b.Days))
	})
	be := w.Prices.BreakEvenHours()
	var out []Recommendation
	for _, t := range ts {
		if t.Days < 1 {
			continue
		}
		switch {
		case t.Class == string(jobs.ClassBurst) && t.ActiveHoursPerDay > be+eps:
			out = append(out, toFixed(w, t))
		case t.Class == string(jobs.ClassCore) && t.ActiveHoursPerDay < be-eps:
			out = append(out, toElastic(w, t))
		}
	}
	return out
}

func toFixed(w Window, t TemplateHours) Recommendation {
	ev := templateEvidence(w, t)
	return Recommendation{
		Kind:     KindTemplateToFixed,
		Severity: SeverityInfo,
		Title: fmt.Sprintf("Burst template %q runs %.1f h/day, over the %.1f h/day break-even",
			t.Template, t.ActiveHoursPerDay, ev.BreakEvenHours),
		Action: fmt.Sprintf("Move template %q to fixed quota and raise the quota by about %d "+
			"slots for it: at %.1f h/day it costs less on fixed than on elastic (break-even "+
			"%.1f h/day).", t.Template, ev.Slots, t.ActiveHoursPerDay, ev.BreakEvenHours),
		Evidence:    Evidence{Template: &ev},
		RuleOfThumb: ruleOfThumb(w, ev),
	}
}

func toElastic(w Window, t TemplateHours) Recommendation {
	ev := templateEvidence(w, t)
	return Recommendation{
		Kind:     KindTemplateToElastic,
		Severity: SeverityInfo,
		Title: fmt.Sprintf("Core template %q runs %.1f h/day, under the %.1f h/day break-even",
			t.Template, t.ActiveHoursPerDay, ev.BreakEvenHours),
		Action: fmt.Sprintf("Template %q could run elastic (class burst) if its jobs can stand "+
			"the elastic start-up delay: at %.1f h/day it costs less there than on fixed "+
			"(break-even %.1f h/day), and it frees about %d slots of quota.",
			t.Template, t.ActiveHoursPerDay, ev.BreakEvenHours, ev.Slots),
		Evidence:    Evidence{Template: &ev},
		RuleOfThumb: ruleOfThumb(w, ev),
	}
}

func templateEvidence(w Window, t TemplateHours) TemplateEvidence {
	ev := TemplateEvidence{
		Template: t.Template, Class: t.Class, Days: t.Days,
		ActiveHoursPerDay: t.ActiveHoursPerDay, SlotHoursPerDay: t.SlotHoursPerDay,
		BreakEvenHours:   w.Prices.BreakEvenHours(),
		ElasticOverFixed: w.Prices.ElasticPerSlotHour / w.Prices.FixedPerSlotHour,
		RuleOfThumbHours: ruleOfThumbHours, RuleOfThumbSays: "elastic",
	}
	if t.ActiveHoursPerDay > 0 {
		ev.Slots = ceil(t.SlotHoursPerDay / t.ActiveHoursPerDay)
	}
	if t.ActiveHoursPerDay > ruleOfThumbHours {
		ev.RuleOfThumbSays = "fixed"
	}
	// A template only gets here on the wrong side of the break-even, so
	// the break-even puts it on the side opposite its class.
	belongs := "fixed"
	if t.Class == string(jobs.ClassCore) {
		belongs = "elastic"
	}
	ev.RuleOfThumbAgrees = ev.RuleOfThumbSays == belongs
	return ev
}

// ruleOfThumb shows the source's 8 h rule beside the advice and says when
// it holds, so that nobody applies it at other prices.
func ruleOfThumb(w Window, ev TemplateEvidence) string {
	verdict := "agrees here"
	if !ev.RuleOfThumbAgrees {
		verdict = "gets this template wrong at these prices"
	}
	return fmt.Sprintf("Source's rule of thumb: over 8 h/day belongs on fixed; it says %s "+
		"for %q, and %s. The 8 h rule only holds when elastic costs about 3x fixed; here "+
		"elastic costs %.2fx fixed, so the break-even is 24 h x fixed / elastic = "+
		"24 x %g / %g = %.1f h/day.", ev.RuleOfThumbSays, ev.Template, verdict,
		ev.ElasticOverFixed, w.Prices.FixedPerSlotHour, w.Prices.ElasticPerSlotHour, ev.BreakEvenHours)
}
