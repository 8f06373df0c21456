package trace

import (
	"fmt"
	"math"
	"time"
)

// Shares of DefaultSynthetic's jobs by rhythm.
const (
	defaultPeriodicShare = 0.20
	defaultPulseShare    = 0.35
	defaultMixedShare    = 0.45
)

// DefaultSynthetic describes about jobsTarget jobs over the 30 days of
// April 2025 (UTC), a month whose end falls inside the span, with all three
// rhythms: 20% periodic (four daily pipelines and a weekly retraining, each
// firing at least one job), 35% pulse (five times as busy 09:00 to 18:00 on
// weekdays) and 45% mixed (30% of its peak, rising over the last 5 days).
// A jobsTarget below 1 counts as 1; small targets overshoot because every
// pipeline firing has at least one job. Callers may change any field
// before Generate; the rates were fitted to these Start and Span.
func DefaultSynthetic(jobsTarget int, seed uint64) Synthetic {
	target := float64(max(jobsTarget, 1))
	g := Synthetic{
		Name:  fmt.Sprintf("synthetic-%d-seed-%d", jobsTarget, seed),
		Seed:  seed,
		Start: time.Date(2025, time.April, 1, 0, 0, 0, 0, time.UTC),
		Span:  30 * 24 * time.Hour,
		Slots: []SlotWeight{{1, 0.55}, {2, 0.20}, {4, 0.15}, {8, 0.10}},
		// Ad hoc jobs: median 15 minutes, a few running for hours.
		Duration:  LogNormal{Median: 15 * time.Minute, Sigma: 1.0, Max: 12 * time.Hour},
		Teams:     []string{"ads", "data", "ml", "risk", "search"},
		Templates: []string{"backfill", "batch-infer", "eval", "loadtest", "report", "train"},
		Periodic: []Pipeline{
			{Template: "etl-nightly", Team: "data", At: 2 * time.Hour, Deadline: 4 * time.Hour,
				Duration: LogNormal{Median: 40 * time.Minute, Sigma: 0.3, Max: 4 * time.Hour}},
			{Template: "feature-refresh", Team: "ml", At: 6 * time.Hour, Deadline: 3 * time.Hour,
				Duration: LogNormal{Median: 30 * time.Minute, Sigma: 0.3, Max: 3 * time.Hour}},
			{Template: "report-daily", Team: "ads", At: 8 * time.Hour, Deadline: time.Hour, Slots: 1,
				Duration: LogNormal{Median: 10 * time.Minute, Sigma: 0.2, Max: time.Hour}},
			{Template: "index-build", Team: "search", At: 22 * time.Hour, Deadline: 6 * time.Hour,
				Duration: LogNormal{Median: time.Hour, Sigma: 0.3, Max: 6 * time.Hour}},
			{Template: "retrain-weekly", Team: "ml", At: 3 * time.Hour, Weekly: true, Weekday: time.Sunday,
				Deadline: 12 * time.Hour, Slots: 8, Checkpointable: true,
				Duration: LogNormal{Median: 3 * time.Hour, Sigma: 0.3, Max: 12 * time.Hour}},
		},
		Pulse: &Pulse{OffRate: 1, WorkRate: 5, Checkpointable: 0.6},
		Mixed: &Mixed{PeakRate: 1, Base: defaultBase, RampDays: defaultRampDays, Checkpointable: 0.8},
	}
	// Every rhythm's count is linear in its rate (or jobs per firing), so
	// one pass at unit rates gives the factors that hit the target.
	for i := range g.Periodic {
		g.Periodic[i].Jobs = 1
	}
	firings, pulse, mixed := g.withDefaults().expected()
	perFiring := max(1, int(math.Round(defaultPeriodicShare*target/firings)))
	for i := range g.Periodic {
		g.Periodic[i].Jobs = perFiring
	}
	g.Pulse.OffRate *= defaultPulseShare * target / pulse
	g.Pulse.WorkRate *= defaultPulseShare * target / pulse
	g.Mixed.PeakRate *= defaultMixedShare * target / mixed
	return g
}
