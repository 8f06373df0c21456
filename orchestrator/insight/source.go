package insight

import (
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/queues"
)

// Defaults of a Source's spans.
const (
	// DefaultRecent is the span of the key measures' current figures.
	DefaultRecent = time.Hour
	// DefaultSeriesWindow and DefaultSeriesStep shape the key measures'
	// series: six hours in 10-minute buckets.
	DefaultSeriesWindow = 6 * time.Hour
	DefaultSeriesStep   = 10 * time.Minute
	// DefaultAdviceWindow is how far back the overview's advice looks.
	DefaultAdviceWindow = 24 * time.Hour
	// Retention is how long usage records and ended worker lives are
	// kept unless the config says otherwise (controller.cost_retention).
	Retention = config.DefaultCostRetention
)

// Source reads the live store with the settings that price and judge it.
type Source struct {
	Store *queues.Store
	// Pools are the configured pools with their prices and billing.
	Pools []policy.Pool
	// Quota is each fixed pool's prepaid slots.
	Quota map[string]int
	// High and Low are the watermarks the controller runs with.
	High, Low float64
	// Location sets the cost days; nil means UTC.
	Location *time.Location
	// Recent, SeriesWindow, SeriesStep, AdviceWindow and Retention
	// override the defaults above when positive.
	Recent, SeriesWindow, SeriesStep, AdviceWindow, Retention time.Duration
}

// FromConfig is the Source of a loaded config.
func FromConfig(store *queues.Store, cfg config.Config) Source {
	pc := cfg.PolicyConfig()
	return Source{Store: store, Pools: cfg.PolicyPools(), Quota: cfg.FixedQuota(), High: pc.High, Low: pc.Low,
		Retention: cfg.Controller.CostRetention.Std()}
}

func (s Source) pool(name string) (policy.Pool, bool) {
	for _, p := range s.Pools {
		if p.Name == name {
			return p, true
		}
	}
	return policy.Pool{}, false
}

func (s Source) loc() *time.Location {
	if s.Location == nil {
		return time.UTC
	}
	return s.Location
}

// KeptFor is how long usage records are kept: the oldest window that can
// be priced.
func (s Source) KeptFor() time.Duration { return orDefault(s.Retention, Retention) }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
