package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// DefaultNamespace is the metric name prefix used when Options.Namespace is
// empty.
const DefaultNamespace = "ballast"

// DefaultServiceName is the service.name resource attribute sent over OTLP
// when neither Options.ServiceName nor OTEL_SERVICE_NAME is set.
const DefaultServiceName = "ballast-controller"

// scopeName identifies the instrumentation scope; it only shows up in OTLP
// exports because the Prometheus side drops scope labels.
const scopeName = "github.com/ballastdev/ballast/orchestrator/control/telemetry"

// Job classes, the values of the class attribute.
const (
	ClassCore  = "core"
	ClassBurst = "burst"
)

// Job outcomes, the values of the outcome attribute of ballast.jobs.finished.
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
)

// Preemption reasons, the values of the reason attribute of
// ballast.preemptions.
const (
	ReasonReclaim    = "reclaim"
	ReasonMigrate    = "migrate"
	ReasonRepack     = "repack"
	ReasonSpot       = "spot"
	ReasonDrain      = "drain"
	ReasonWorkerLost = "worker_lost"
)

// Worker states, the keys of PoolSlots.Workers and the values of the state
// attribute of ballast.workers.
const (
	WorkerStarting = "starting"
	WorkerUp       = "up"
	WorkerDraining = "draining"
)

// Slot states, the values of the state attribute of ballast.slots.
const (
	SlotBusy = "busy"
	SlotIdle = "idle"
)

// WaitBuckets are the upper bounds, in seconds, of the ballast.job.wait
// histogram. They run from 10 ms (a core job picked up by an idle slot) to
// 2 h (a burst job waiting out a cold elastic launch behind a long queue),
// roughly 2-3x apart so each decade keeps enough resolution for quantiles.
// New reads it once; treat it as read-only.
var WaitBuckets = []float64{
	0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10, 30, 60,
	120, 300, 600, 1200, 1800, 3600, 7200,
}

// Options configure New. The zero value is usable.
type Options struct {
	// Namespace prefixes every instrument name ("<Namespace>.job.wait",
	// exported to Prometheus as "<Namespace>_job_wait_seconds"). Empty means
	// DefaultNamespace.
	Namespace string

	// ServiceName is the service.name resource attribute of OTLP exports;
	// OTEL_SERVICE_NAME overrides it. Empty means DefaultServiceName.
	ServiceName string

	// DisableOTLP turns off the OTLP push even when OTEL_EXPORTER_OTLP_*
	// endpoint variables are set, for embedders and tests that only want the
	// scrape endpoint.
	DisableOTLP bool

	// Logger receives errors met while serving a scrape. Nil discards them.
	Logger *slog.Logger
}

// Metrics records the controller's metrics. Create it with New. Its methods
// are safe for concurrent use, and a nil *Metrics records nothing, so callers
// with metrics turned off need no guards.
type Metrics struct {
	provider *sdkmetric.MeterProvider
	ns       string // the instruments' name prefix
	registry *prometheus.Registry
	handler  http.Handler

	jobWait     metric.Float64Histogram
	jobFinished metric.Int64Counter
	preemptions metric.Int64Counter
	overflows   metric.Int64Counter
	qos         qosCounters
	fencing     fencingCounters
	ckpt        checkpointCounters
	share       shareInstruments
	redis       metric.Int64Gauge
	dataLost    metric.Int64Gauge
	dataLostAt  metric.Int64Gauge
	gaugeSet    gauges

	mu   sync.Mutex
	snap Snapshot
	has  bool // snap was set at least once
	idle idleWindow

	shutdownOnce sync.Once
	shutdownErr  error
}

// New builds a Metrics with its own MeterProvider and Prometheus registry.
// When OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is
// set (and Options.DisableOTLP is not), metrics are also pushed over
// OTLP/HTTP every OTEL_METRIC_EXPORT_INTERVAL (default 60 s); call Shutdown
// to flush that push and stop its goroutine.
func New(o Options) (*Metrics, error) {
	ns := o.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}

	// A private registry rather than prometheus.DefaultRegisterer: two
	// Metrics in one process (tests, or a controller embedded next to
	// another) would otherwise fail to register or merge their series.
	reg := prometheus.NewRegistry()
	promExp, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		// Scope labels would repeat the package path on every series, and
		// target_info duplicates what Prometheus' job/instance labels say.
		otelprom.WithoutScopeInfo(),
		otelprom.WithoutTargetInfo(),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: prometheus exporter: %w", err)
	}

	res, err := newResource(o.ServiceName)
	if err != nil {
		return nil, err
	}
	popts := []sdkmetric.Option{sdkmetric.WithReader(promExp), sdkmetric.WithResource(res)}
	if !o.DisableOTLP {
		r, err := otlpReader()
		if err != nil {
			return nil, err
		}
		if r != nil {
			popts = append(popts, sdkmetric.WithReader(r))
		}
	}
	provider := sdkmetric.NewMeterProvider(popts...)

	m := &Metrics{
		provider: provider,
		ns:       ns,
		registry: reg,
		handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			// A single broken series should not blank the whole scrape:
			// the queue and cost gauges matter most when something is
			// already going wrong.
			ErrorHandling: promhttp.ContinueOnError,
			ErrorLog:      promLogger{o.Logger},
		}),
	}
	if err := m.instruments(provider.Meter(scopeName), ns); err != nil {
		// The provider may already run an OTLP goroutine.
		_ = provider.Shutdown(context.Background())
		return nil, err
	}
	return m, nil
}

// newResource describes the process for OTLP receivers. The environment
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) is applied last so operators
// can relabel a deployment without a rebuild.
func newResource(serviceName string) (*resource.Resource, error) {
	if serviceName == "" {
		serviceName = DefaultServiceName
	}
	res, err := resource.New(context.Background(),
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", serviceName)),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return res, nil
}

// instruments creates the synchronous instruments and the gauges' callback.
func (m *Metrics) instruments(meter metric.Meter, ns string) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error

	m.jobWait, err = meter.Float64Histogram(ns+".job.wait",
		metric.WithUnit("s"),
		metric.WithDescription("Time a job spent between submission (or re-queueing) and the start of its attempt, by class and pool."),
		metric.WithExplicitBucketBoundaries(WaitBuckets...))
	add(err)
	m.jobFinished, err = meter.Int64Counter(ns+".jobs.finished",
		metric.WithUnit("{job}"),
		metric.WithDescription("Jobs that reached a terminal state, by class and outcome (succeeded, failed, cancelled)."))
	add(err)
	m.preemptions, err = meter.Int64Counter(ns+".preemptions",
		metric.WithUnit("{preemption}"),
		metric.WithDescription("Running attempts the controller took off their worker, by reason (reclaim, migrate, spot, drain, worker_lost)."))
	add(err)
	m.overflows, err = meter.Int64Counter(ns+".overflows",
		metric.WithUnit("{job}"),
		metric.WithDescription("Queued core jobs sent to on-demand capacity after waiting their allowed delay for fixed quota (rule 7), by target pool."))
	add(err)

	add(m.qos.create(meter, ns))
	add(m.createFencing(meter, ns))
	add(m.ckpt.create(meter, ns))
	add(m.createShares(meter, ns))

	// A synchronous gauge: the controller checks Redis once at start, not
	// every tick, so there is no snapshot for the callback to read.
	m.redis, err = meter.Int64Gauge(ns+".redis.durable",
		metric.WithDescription("1 when Redis keeps accepted jobs across a restart and never evicts them (appendonly or save set, maxmemory-policy noeviction), else 0; reason says why (no_persistence, evicting, unknown when CONFIG is refused)."))
	add(err)

	// Synchronous too: the controller sets them at every tick from the
	// loss record, which its epoch check reads anyway.
	m.dataLost, err = meter.Int64Gauge(ns+".redis.data_lost",
		metric.WithDescription("1 while a loss of Redis data (restarted empty, flushed, rolled back) is recorded and not yet recovered or acknowledged, else 0. `ballast status` says when and how it was noticed."))
	add(err)
	m.dataLostAt, err = meter.Int64Gauge(ns+".redis.data_lost_at",
		metric.WithUnit("s"),
		metric.WithDescription("When the recorded loss of Redis data was noticed (Unix seconds); 0 when none is recorded."))
	add(err)

	g, err := m.gauges(meter, ns)
	add(err)
	if len(errs) == 0 {
		_, err = meter.RegisterCallback(m.observe, g.all()...)
		add(err)
		m.gaugeSet = g
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: instruments: %w", err)
	}
	return nil
}

// Handler serves the metrics in the Prometheus exposition format; mount it
// at /metrics.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return m.handler
}

// Shutdown flushes a pending OTLP push and stops the provider. Recording
// after Shutdown is a no-op. It is idempotent.
func (m *Metrics) Shutdown(ctx context.Context) error {
	if m == nil {
		return nil
	}
	m.shutdownOnce.Do(func() { m.shutdownErr = m.provider.Shutdown(ctx) })
	return m.shutdownErr
}

// JobStarted records how long a job of the given class waited in pool's
// queue between submission (or re-queueing) and the start of its attempt.
func (m *Metrics) JobStarted(class, pool string, wait time.Duration) {
	if m == nil {
		return
	}
	// Clocks of the submitter and the worker can disagree by a little; a
	// negative wait would be dropped by the histogram, so count it as zero.
	wait = max(wait, 0)
	m.jobWait.Record(context.Background(), wait.Seconds(), metric.WithAttributes(
		attribute.String("class", class),
		attribute.String("pool", pool),
	))
}

// JobFinished counts a job of the given class that reached a terminal
// outcome (OutcomeSucceeded, OutcomeFailed, OutcomeCancelled).
func (m *Metrics) JobFinished(class, outcome string) {
	if m == nil {
		return
	}
	m.jobFinished.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String("class", class),
		attribute.String("outcome", outcome),
	))
}

// Preempted counts an attempt taken off its worker for reason (ReasonReclaim,
// ReasonMigrate, ReasonRepack, ReasonSpot, ReasonDrain, ReasonWorkerLost).
func (m *Metrics) Preempted(reason string) {
	if m == nil {
		return
	}
	m.preemptions.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String("reason", reason),
	))
}

// Overflowed counts a queued core job that rule 7 sent to on-demand pool
// after it waited too long for fixed quota: each one is work paid at the
// on-demand premium, so a rising count says the quota is short for core.
func (m *Metrics) Overflowed(pool string) {
	if m == nil {
		return
	}
	m.overflows.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String("pool", pool),
	))
}

// RedisDurability records the controller's verdict on its Redis's
// settings (redisinfo.Durability): durable or not, and a short reason
// label. The reason stays on the series so an alert can say what to fix.
func (m *Metrics) RedisDurability(durable bool, reason string) {
	if m == nil {
		return
	}
	v := int64(0)
	if durable {
		v = 1
	}
	m.redis.Record(context.Background(), v, metric.WithAttributes(attribute.String("reason", reason)))
}

// RedisDataLost records the loss record the controller saw at its last
// tick: 1 while one stands, 0 once it is recovered or acknowledged (no
// reason label: a series left at 1 under an old label would never clear). An alert on it is how an operator hears of a loss that
// nobody ran `ballast status` for.
func (m *Metrics) RedisDataLost(lost bool, at time.Time) {
	if m == nil {
		return
	}
	v, ts := int64(0), int64(0)
	if lost {
		v, ts = 1, at.Unix()
	}
	m.dataLost.Record(context.Background(), v)
	m.dataLostAt.Record(context.Background(), ts)
}

// promLogger sends promhttp's scrape errors to slog.
type promLogger struct{ l *slog.Logger }

// Println implements promhttp.Logger.
func (p promLogger) Println(v ...any) {
	if p.l != nil {
		p.l.Error("telemetry: metrics scrape", "err", fmt.Sprint(v...))
	}
}
