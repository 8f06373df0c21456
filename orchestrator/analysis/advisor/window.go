package advisor

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Window is what happened over one stretch of time, with the settings it
// ran under. Waits and samples stamped outside [From, Until] are ignored, so
// a caller may pass a wider slice than the window.
type Window struct {
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// Prices give the break-even that the quota and template advice weigh.
	Prices planner.Prices `json:"prices"`
	// High and Low are the watermarks the window ran with, as fractions of
	// the fixed quota (policy.Config.High and Low).
	High float64 `json:"high"`
	Low  float64 `json:"low"`
	// CoreOverflow and CoreMaxWait are rule 7 as the window ran it: core
	// work reaches on-demand machines only through it.
	CoreOverflow bool          `json:"core_overflow"`
	CoreMaxWait  time.Duration `json:"core_max_wait"`
	// FixedSlots is the size of the fixed quota.
	FixedSlots int `json:"fixed_slots"`
	// ElasticWaits are the jobs that started on elastic capacity in the
	// window, or were still waiting for it.
	ElasticWaits []Wait `json:"elastic_waits"`
	// FixedIdle is the idle share of the quota, sampled over time.
	FixedIdle []Sample `json:"fixed_idle"`
	// Templates is how long each template ran per day.
	Templates []TemplateHours `json:"templates"`
	// MinDemand is the lowest hourly average of busy slots in the window:
	// the "minimum demand" of the source's quota rule of thumb.
	MinDemand float64 `json:"min_demand"`
	// Shapes are the window's jobs, finished or not, by shape, and which
	// pools can hold each.
	Shapes planner.Shapes `json:"shapes"`
	// Teams are the teams with a share of the quota and how they used it;
	// empty when shares are off.
	Teams []TeamShare `json:"teams,omitempty"`
	// Pools are the configured pools with each fixed pool's quota, and
	// History the window's finished jobs as a trace: what a suggested
	// pool is simulated on.
	Pools   []policy.Pool  `json:"-"`
	Quotas  map[string]int `json:"-"`
	History trace.Trace    `json:"-"`
}

// Wait is how long one job waited for elastic capacity.
type Wait struct {
	// At places the wait in time: when the job started, or, for a job
	// still waiting, when the wait was measured.
	At    time.Time     `json:"at"`
	Class string        `json:"class"`
	Wait  time.Duration `json:"wait"`
}

// Sample is one reading of a share over time.
type Sample struct {
	At time.Time `json:"at"`
	// Value is a fraction in [0, 1]; readings outside are clamped.
	Value float64 `json:"value"`
}

// TemplateHours is how much one template ran per day over Days days.
type TemplateHours struct {
	Template string `json:"template"`
	// Class is "core" or "burst"; any other template is left alone, since
	// it has no side of the break-even to be on.
	Class string `json:"class"`
	// ActiveHoursPerDay is how many hours a day at least one of its jobs
	// ran: what the break-even compares.
	ActiveHoursPerDay float64 `json:"active_hours_per_day"`
	// SlotHoursPerDay is the work itself, slots x hours per day.
	SlotHoursPerDay float64 `json:"slot_hours_per_day"`
	// Days is how many days the figures are averaged over; a template
	// with no day of history is left alone.
	Days int `json:"days"`
}

// TemplatesFrom converts the planner's per-template use over a trace of
// days days, so a plan's table can be fed to the advisor as it is.
func TemplatesFrom(uses []planner.TemplateUse, days int) []TemplateHours {
	out := make([]TemplateHours, 0, len(uses))
	for _, u := range uses {
		out = append(out, TemplateHours{
			Template:          u.Template,
			Class:             string(u.Class),
			ActiveHoursPerDay: u.ActiveHoursPerDay,
			SlotHoursPerDay:   u.SlotHoursPerDay,
			Days:              days,
		})
	}
	return out
}

// contains says whether t is inside the window, both ends included: a job
// still waiting at the end of the window is stamped Until.
func (w Window) contains(t time.Time) bool {
	return !t.Before(w.From) && !t.After(w.Until)
}
