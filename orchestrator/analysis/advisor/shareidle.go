package advisor

import (
	"fmt"
	"time"
)

// TeamShare is one team's share of the quota and how the team used it
// over the window (cost.FixedUse gives the figures).
type TeamShare struct {
	Team string `json:"team"`
	// Share is the team's share in slots now.
	Share int `json:"share"`
	// OwnIdle is the part of the share's slot-time the team did not use
	// itself, and Lent the part of it other teams borrowed; OwnIdle -
	// Lent sat idle.
	OwnIdle float64 `json:"own_idle"`
	Lent    float64 `json:"lent"`
	// Covered is how long the figures cover.
	Covered time.Duration `json:"covered"`
	// UsageP90 is the slots the team's fixed usage stayed at or below
	// nine tenths of the time, on its share or beyond.
	UsageP90 float64 `json:"usage_p90"`
}

// ShareEvidence is a team's share left idle by its own work, and the
// share that would cover its use.
type ShareEvidence struct {
	TeamShare
	Threshold float64 `json:"threshold"`
	// Suggested is UsageP90 rounded up: the share to set.
	Suggested int `json:"suggested"`
}

// KindShareIdle is a team's share its own work leaves idle.
const KindShareIdle = "share-idle"

// shareIdle advises shrinking each team's share that its own work left
// idle more than MaxIdle of the window, to the slots its fixed usage
// stayed within nine tenths of the time. A share whose use, though idle
// on average, reaches the share that often is left alone: its owner
// needs it at the peaks, and lending covers the rest. Loans make the
// idle cheaper for the owner but do not make the share the right size,
// so what was lent is reported, not subtracted.
func (o Options) shareIdle(w Window) []Recommendation {
	var out []Recommendation
	for _, t := range w.Teams {
		if t.Share <= 0 || t.Covered < o.MinIdleCovered || t.OwnIdle <= o.MaxIdle+eps {
			continue
		}
		ev := ShareEvidence{TeamShare: t, Threshold: o.MaxIdle, Suggested: ceil(t.UsageP90)}
		if ev.Suggested >= t.Share {
			continue
		}
		out = append(out, Recommendation{
			Kind:     KindShareIdle,
			Severity: SeverityInfo,
			Title:    fmt.Sprintf("Team %s left %.0f%% of its share idle", t.Team, 100*t.OwnIdle),
			Action: fmt.Sprintf("Set shares.teams.%s.slots from %d to %d: its own work left %.0f%% of the share "+
				"unused over %s (over %.0f%%; others borrowed %.0f%% of it), and its fixed use stayed at or below "+
				"%g slots nine tenths of the time. The freed slots become common, or a share for a team that borrows.",
				t.Team, t.Share, ev.Suggested, 100*t.OwnIdle, t.Covered.Round(time.Minute), 100*o.MaxIdle,
				100*t.Lent, t.UsageP90),
			Evidence: Evidence{Share: &ev},
		})
	}
	return out
}
