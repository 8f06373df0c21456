package telemetry

import (
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// IdleRatioWindow is how far back ballast.fixed.idle_ratio_hour averages
// the FixedIdleRatio samples.
const IdleRatioWindow = time.Hour

// Snapshot is the controller's view of queues, pools and costs at one tick.
// The gauges report the latest Snapshot handed to SetSnapshot; series for a
// queue, pool or team absent from it disappear from the next scrape.
type Snapshot struct {
	// At is when the controller took the snapshot. It timestamps the
	// FixedIdleRatio sample for the rolling hour; zero means time.Now().
	At time.Time

	// Queues feed ballast.queue.depth and ballast.queue.oldest_age.
	Queues []QueueDepth
	// Pools feed ballast.slots and ballast.workers.
	Pools []PoolSlots

	// FixedIdleRatio is the share of fixed-pool slots idle right now, in
	// [0, 1]. It feeds ballast.fixed.idle_ratio and is one sample of the
	// rolling ballast.fixed.idle_ratio_hour. NaN (no fixed capacity) is
	// neither reported nor sampled.
	FixedIdleRatio float64

	// CostPerHourByPool is what each pool costs right now, in currency per
	// hour; it feeds ballast.cost.rate.
	CostPerHourByPool map[string]float64
	// CostTodayByPool is what each pool has been paid today (from midnight
	// in the cost time zone), idle capacity included; it feeds
	// ballast.cost.pool_today. CostTodayByTeam is what each team's jobs
	// were charged today; it feeds ballast.cost.team_today. Pools are paid
	// for idle time too, so the teams add up to less than the pools.
	CostTodayByPool map[string]float64
	CostTodayByTeam map[string]float64

	// Isolation is each worker's QoS isolation; it feeds
	// ballast.worker.qos_limits.
	Isolation []WorkerIsolation

	// Fencing is each worker's self-fences; it feeds
	// ballast.worker.self_fences and ballast.worker.self_fenced.
	Fencing []WorkerFencing
}

// WorkerIsolation is what one worker reports of its QoS isolation.
type WorkerIsolation struct {
	Worker string
	// Mode is v2, v1 or off.
	Mode string
	// InForce and NotInForce count the configured limits.
	InForce, NotInForce int
}

// QueueDepth is the backlog of one queue.
type QueueDepth struct {
	Queue string
	// Pending counts jobs waiting to start.
	Pending int
	// OldestSeconds is the age of the oldest pending job; 0 when empty.
	OldestSeconds float64
}

// PoolSlots is the capacity of one pool.
type PoolSlots struct {
	Pool string
	// Kind is the pool's kind as the policy names it (fixed, elastic, ...),
	// kept as a label so dashboards can split fixed from elastic capacity.
	Kind string
	// Busy and Idle count slots on workers that are up.
	Busy, Idle int
	// Workers counts the pool's workers by state (WorkerStarting,
	// WorkerUp, WorkerDraining).
	Workers map[string]int
}

// SetSnapshot replaces the snapshot the gauges report and adds its
// FixedIdleRatio to the rolling hour. The controller calls it once per tick;
// s is copied, so the caller may reuse its slices and maps.
func (m *Metrics) SetSnapshot(s Snapshot) {
	if m == nil {
		return
	}
	if s.At.IsZero() {
		s.At = time.Now()
	}
	s.Queues = slices.Clone(s.Queues)
	s.Pools = slices.Clone(s.Pools)
	for i := range s.Pools {
		s.Pools[i].Workers = maps.Clone(s.Pools[i].Workers)
	}
	s.CostPerHourByPool = maps.Clone(s.CostPerHourByPool)
	s.CostTodayByPool = maps.Clone(s.CostTodayByPool)
	s.CostTodayByTeam = maps.Clone(s.CostTodayByTeam)
	s.Isolation = slices.Clone(s.Isolation)
	s.Fencing = slices.Clone(s.Fencing)

	m.mu.Lock()
	defer m.mu.Unlock()
	m.snap = s
	m.has = true
	if !math.IsNaN(s.FixedIdleRatio) {
		m.idle.add(s.At, s.FixedIdleRatio)
	}
}

// gauges are the asynchronous instruments fed from the snapshot.
type gauges struct {
	queueDepth    metric.Int64ObservableGauge
	queueAge      metric.Float64ObservableGauge
	slots         metric.Int64ObservableGauge
	workers       metric.Int64ObservableGauge
	idleRatio     metric.Float64ObservableGauge
	idleRatioHour metric.Float64ObservableGauge
	costRate      metric.Float64ObservableGauge
	costPool      metric.Float64ObservableGauge
	costTeam      metric.Float64ObservableGauge
	qosLimits     metric.Int64ObservableGauge
}

// all lists the instruments for RegisterCallback.
func (g gauges) all() []metric.Observable {
	return []metric.Observable{
		g.queueDepth, g.queueAge, g.slots, g.workers,
		g.idleRatio, g.idleRatioHour, g.costRate, g.costPool, g.costTeam, g.qosLimits,
	}
}

// gauges creates the snapshot-fed instruments.
func (m *Metrics) gauges(meter metric.Meter, ns string) (gauges, error) {
	var g gauges
	var errs [10]error
	g.queueDepth, errs[0] = meter.Int64ObservableGauge(ns+".queue.depth",
		metric.WithUnit("{job}"),
		metric.WithDescription("Jobs pending in each queue."))
	g.queueAge, errs[1] = meter.Float64ObservableGauge(ns+".queue.oldest_age",
		metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest pending job in each queue."))
	g.slots, errs[2] = meter.Int64ObservableGauge(ns+".slots",
		metric.WithUnit("{slot}"),
		metric.WithDescription("Slots on up workers, by pool, pool kind and state (busy, idle)."))
	g.workers, errs[3] = meter.Int64ObservableGauge(ns+".workers",
		metric.WithUnit("{worker}"),
		metric.WithDescription("Workers by pool and state (starting, up, draining)."))
	// The ratios use the empty unit rather than "1": for a gauge of unit
	// "1" the Prometheus translator moves the "ratio" token to the end,
	// which would export idle_ratio_hour as ballast_fixed_idle_hour_ratio.
	g.idleRatio, errs[4] = meter.Float64ObservableGauge(ns+".fixed.idle_ratio",
		metric.WithDescription("Share of fixed-pool slots idle at the latest controller tick (0..1)."))
	g.idleRatioHour, errs[5] = meter.Float64ObservableGauge(ns+".fixed.idle_ratio_hour",
		metric.WithDescription("Mean of the fixed-pool idle ratio over the controller ticks of the last hour (0..1), rolling."))
	g.costRate, errs[6] = meter.Float64ObservableGauge(ns+".cost.rate",
		metric.WithUnit("{currency}/h"),
		metric.WithDescription("What each pool costs right now, in currency per hour."))
	// Gauges, not counters: the ledger owns the totals (it is recomputed
	// from the usage records, so it survives controller restarts and a
	// late record corrects it), and the metrics mirror its values.
	g.costPool, errs[7] = meter.Float64ObservableGauge(ns+".cost.pool_today",
		metric.WithUnit("{currency}"),
		metric.WithDescription("What each pool has been paid today (since midnight), idle capacity included; mirrors the cost ledger."))
	g.costTeam, errs[8] = meter.Float64ObservableGauge(ns+".cost.team_today",
		metric.WithUnit("{currency}"),
		metric.WithDescription("What each team's jobs were charged today (since midnight); mirrors the cost ledger."))
	g.qosLimits, errs[9] = meter.Int64ObservableGauge(ns+".worker.qos_limits",
		metric.WithUnit("{limit}"),
		metric.WithDescription("Configured QoS limits on each worker, by isolation mode (v2, v1, off) and state (in_force, not_in_force)."))
	for _, err := range errs {
		if err != nil {
			return g, err
		}
	}
	return g, nil
}

// observe reports the latest snapshot; the SDK calls it on every collection.
func (m *Metrics) observe(_ context.Context, o metric.Observer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.has {
		// Before the first tick there is nothing true to report; zeros
		// would read as "empty queues, no workers".
		return nil
	}
	g, s := m.gaugeSet, &m.snap

	for _, q := range s.Queues {
		a := metric.WithAttributes(attribute.String("queue", q.Queue))
		o.ObserveInt64(g.queueDepth, int64(q.Pending), a)
		o.ObserveFloat64(g.queueAge, q.OldestSeconds, a)
	}
	for _, p := range s.Pools {
		pool, kind := attribute.String("pool", p.Pool), attribute.String("kind", p.Kind)
		o.ObserveInt64(g.slots, int64(p.Busy), metric.WithAttributes(pool, kind, attribute.String("state", SlotBusy)))
		o.ObserveInt64(g.slots, int64(p.Idle), metric.WithAttributes(pool, kind, attribute.String("state", SlotIdle)))
		for state, n := range p.Workers {
			o.ObserveInt64(g.workers, int64(n), metric.WithAttributes(pool, attribute.String("state", state)))
		}
	}
	if !math.IsNaN(s.FixedIdleRatio) {
		o.ObserveFloat64(g.idleRatio, s.FixedIdleRatio)
	}
	if mean, ok := m.idle.mean(); ok {
		o.ObserveFloat64(g.idleRatioHour, mean)
	}
	for pool, v := range s.CostPerHourByPool {
		o.ObserveFloat64(g.costRate, v, metric.WithAttributes(attribute.String("pool", pool)))
	}
	for pool, v := range s.CostTodayByPool {
		o.ObserveFloat64(g.costPool, v, metric.WithAttributes(attribute.String("pool", pool)))
	}
	for team, v := range s.CostTodayByTeam {
		o.ObserveFloat64(g.costTeam, v, metric.WithAttributes(attribute.String("team", team)))
	}
	for _, w := range s.Isolation {
		wk, mode := attribute.String("worker", w.Worker), attribute.String("mode", w.Mode)
		o.ObserveInt64(g.qosLimits, int64(w.InForce), metric.WithAttributes(wk, mode, attribute.String("state", "in_force")))
		o.ObserveInt64(g.qosLimits, int64(w.NotInForce), metric.WithAttributes(wk, mode, attribute.String("state", "not_in_force")))
	}
	return nil
}

// idleSample is one FixedIdleRatio reading.
type idleSample struct {
	at time.Time
	v  float64
}

// idleWindow holds the FixedIdleRatio samples of the last IdleRatioWindow,
// ordered by time. The window ends at the newest sample rather than at the
// wall clock, so the mean depends only on the timestamps the controller
// passed in.
type idleWindow struct {
	samples []idleSample
}

// add inserts a sample and drops those an hour or more older than the
// newest one.
func (w *idleWindow) add(at time.Time, v float64) {
	// Ticks arrive in order; a backwards clock step is the only way to get
	// an older one, so scanning from the end is nearly always zero steps.
	i := len(w.samples)
	for i > 0 && w.samples[i-1].at.After(at) {
		i--
	}
	w.samples = slices.Insert(w.samples, i, idleSample{at: at, v: v})

	cutoff := w.samples[len(w.samples)-1].at.Add(-IdleRatioWindow)
	drop := 0
	for drop < len(w.samples) && !w.samples[drop].at.After(cutoff) {
		drop++
	}
	// Re-slicing forward leaves the dropped prefix in the backing array
	// only until the next append reallocates it, which bounds memory by
	// about two windows' worth of samples.
	w.samples = w.samples[drop:]
}

// mean is the unweighted mean of the window: the controller ticks at a
// fixed period, so each sample stands for the same span of time.
func (w *idleWindow) mean() (float64, bool) {
	if len(w.samples) == 0 {
		return 0, false
	}
	var sum float64
	for _, s := range w.samples {
		sum += s.v
	}
	return sum / float64(len(w.samples)), true
}
