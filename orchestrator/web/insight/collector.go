package insight

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/advisor"
	"github.com/ballastdev/ballast/orchestrator/control/telemetry"
)

// Collector builds the leader's metrics snapshot each tick, and at a slower
// pace keeps what the metrics and the advisor read over time: the quota's
// idle share as a sample in Redis, and today's cost by pool and team priced
// again from the usage records (which are trimmed to Source.KeptFor then).
// Collect is called from one goroutine (telemetry.Metrics.Poll).
type Collector struct {
	Source Source
	// SampleEvery and CostEvery default to one minute.
	SampleEvery, CostEvery time.Duration
	Logger                 *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	sampled, costed time.Time
	byPool, byTeam  map[string]float64
}

// Collect returns the snapshot at this tick. A failure to price the cost
// is logged and the last figures kept: the other gauges are still right.
func (c *Collector) Collect(ctx context.Context) (telemetry.Snapshot, error) {
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	s := c.Source
	snap, err := telemetry.Collect(ctx, s.Store, s.workers(), s.Pools, s.Quota, now)
	if err != nil {
		return snap, err
	}
	if !math.IsNaN(snap.FixedIdleRatio) && now.Sub(c.sampled) >= orDefault(c.SampleEvery, time.Minute) {
		if s.Accounting.RecordSample(ctx, advisor.SeriesFixedIdle, now, snap.FixedIdleRatio, advisor.SeriesKeep) == nil {
			c.sampled = now
		}
	}
	if now.Sub(c.costed) >= orDefault(c.CostEvery, time.Minute) {
		if err := c.price(ctx, now); err != nil && c.Logger != nil {
			c.Logger.Warn("today's cost not priced", "err", err)
		}
		c.costed = now
	}
	snap.CostTodayByPool, snap.CostTodayByTeam = c.byPool, c.byTeam
	return snap, nil
}

func (c *Collector) price(ctx context.Context, now time.Time) error {
	s := c.Source
	if err := s.Accounting.TrimAccounting(ctx, now.Add(-s.KeptFor())); err != nil {
		return err
	}
	rep, _, err := s.Cost(ctx, s.DayStart(now), now)
	if err != nil {
		return err
	}
	byPool, byTeam := map[string]float64{}, map[string]float64{}
	for _, p := range rep.Pools {
		byPool[p.Pool] = p.PaidCost
	}
	for _, t := range rep.Teams {
		name := t.Name
		if name == "" {
			name = NoTeam
		}
		byTeam[name] = t.Cost
	}
	c.byPool, c.byTeam = byPool, byTeam
	return nil
}
