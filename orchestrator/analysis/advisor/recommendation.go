package advisor

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
)

// Kinds of recommendation, one per rule (templates have one per direction).
const (
	KindPrices            = "prices"
	KindElasticWaits      = "elastic-waits"
	KindWatermarkGap      = "watermark-gap"
	KindWatermarkHeadroom = "watermark-headroom"
	KindFixedIdle         = "fixed-idle"
	KindTemplateToFixed   = "template-to-fixed"
	KindTemplateToElastic = "template-to-elastic"
	KindShapes            = "shapes"
)

// Severities: a warning is about service (jobs wait, work flaps, core has
// no room) or advice that cannot be given; info is about cost.
const (
	SeverityInfo = "info"
	SeverityWarn = "warn"
)

// Recommendation is one piece of advice and what it rests on.
type Recommendation struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	// Action says what to change, with the figure that calls for it.
	Action   string   `json:"action"`
	Evidence Evidence `json:"evidence"`
	// RuleOfThumb is what the source's rule of thumb says about the same
	// question, shown beside the advice so the two can be compared; empty
	// where the source has none.
	RuleOfThumb string `json:"rule_of_thumb,omitempty"`
}

// Evidence holds the figures behind a recommendation: exactly one field is
// set, the one of its rule.
type Evidence struct {
	Prices     *planner.Prices    `json:"prices,omitempty"`
	Waits      *WaitEvidence      `json:"waits,omitempty"`
	Watermarks *WatermarkEvidence `json:"watermarks,omitempty"`
	Idle       *IdleEvidence      `json:"idle,omitempty"`
	Template   *TemplateEvidence  `json:"template,omitempty"`
	Shapes     *ShapeEvidence     `json:"shapes,omitempty"`
	Share      *ShareEvidence     `json:"share,omitempty"`
}

// WaitEvidence is the worst sliding window of elastic waits.
type WaitEvidence struct {
	// From and Until bound the worst window, From included.
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// P95 is the nearest-rank 95th percentile of the window's waits: a wait
	// some job really had.
	P95 time.Duration `json:"p95"`
	// Jobs is how many waits the window holds, ByClass the same by class.
	Jobs      int            `json:"jobs"`
	ByClass   map[string]int `json:"by_class"`
	Threshold time.Duration  `json:"threshold"`
}

// WatermarkEvidence is the watermark pair, what is wrong with it and a pair
// that would not be.
type WatermarkEvidence struct {
	High    float64 `json:"high"`
	Low     float64 `json:"low"`
	Gap     float64 `json:"gap"`
	MinGap  float64 `json:"min_gap"`
	MaxHigh float64 `json:"max_high"`
	// SuggestedHigh and SuggestedLow clear both checks.
	SuggestedHigh float64 `json:"suggested_high"`
	SuggestedLow  float64 `json:"suggested_low"`
}

// IdleEvidence is how idle the fixed quota was and what size it could be.
type IdleEvidence struct {
	// MeanIdle is the time-weighted mean idle share over Covered, from
	// Samples readings.
	MeanIdle  float64       `json:"mean_idle"`
	Threshold float64       `json:"threshold"`
	Samples   int           `json:"samples"`
	Covered   time.Duration `json:"covered"`
	// FixedSlots is the quota now; MeanBusySlots is FixedSlots x (1 -
	// MeanIdle), and MeanBusyQuota that rounded up.
	FixedSlots    int     `json:"fixed_slots"`
	MeanBusySlots float64 `json:"mean_busy_slots"`
	MeanBusyQuota int     `json:"mean_busy_quota"`
	// BreakEvenShare is fixed / elastic price, the share of the time a
	// fixed slot must be busy to pay for itself; BreakEvenQuota is how
	// many slots were busy at least that share of the window. Both are
	// zero when the prices are not set.
	BreakEvenShare float64 `json:"break_even_share"`
	BreakEvenQuota int     `json:"break_even_quota"`
	// MinDemand x 1.2, rounded up, is the source's rule of thumb.
	MinDemand        float64 `json:"min_demand"`
	RuleOfThumbQuota int     `json:"rule_of_thumb_quota"`
	// Suggested is the quota advised: BreakEvenQuota, or MeanBusyQuota
	// without prices. Equal to FixedSlots, it says to keep the quota.
	Suggested int `json:"suggested"`
}

// TemplateEvidence is one template's daily run time against the break-even.
type TemplateEvidence struct {
	Template          string  `json:"template"`
	Class             string  `json:"class"`
	ActiveHoursPerDay float64 `json:"active_hours_per_day"`
	SlotHoursPerDay   float64 `json:"slot_hours_per_day"`
	Days              int     `json:"days"`
	// Slots is the template's mean slots while active, rounded up: the
	// quota it would take, or free.
	Slots int `json:"slots"`
	// BreakEvenHours is 24 h x fixed / elastic price; ElasticOverFixed is
	// the price multiple the 8 h rule of thumb assumes to be 3.
	BreakEvenHours   float64 `json:"break_even_hours"`
	ElasticOverFixed float64 `json:"elastic_over_fixed"`
	// RuleOfThumbHours is the source's 8 h; RuleOfThumbSays is where that
	// rule puts the template ("fixed" or "elastic"), and RuleOfThumbAgrees
	// whether that is where the break-even puts it.
	RuleOfThumbHours  float64 `json:"rule_of_thumb_hours"`
	RuleOfThumbSays   string  `json:"rule_of_thumb_says"`
	RuleOfThumbAgrees bool    `json:"rule_of_thumb_agrees"`
}
