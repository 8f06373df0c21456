package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// WorkerFencing is what one worker reports of its self-fences: the times
// it could not renew its registration for most of the worker TTL and
// stopped its jobs, and the time it spent so, since its process started.
// A worker reports a fence once it reaches Redis again, never during it.
type WorkerFencing struct {
	Worker, Pool string
	Fences       int
	Seconds      float64
}

// fencingCounters are asynchronous counters fed from the snapshot: the
// totals are the workers', kept in their registry entries.
type fencingCounters struct {
	fences  metric.Int64ObservableCounter
	seconds metric.Float64ObservableCounter
}

func (m *Metrics) createFencing(meter metric.Meter, ns string) error {
	var e [3]error
	c := &m.fencing
	c.fences, e[0] = meter.Int64ObservableCounter(ns+".worker.self_fences",
		metric.WithUnit("{fence}"),
		metric.WithDescription("Times each worker process stopped its jobs because it could not renew its registration for most of the worker TTL (cut off from Redis, or Redis down), by worker and pool."))
	c.seconds, e[1] = meter.Float64ObservableCounter(ns+".worker.self_fenced",
		metric.WithUnit("s"),
		metric.WithDescription("Time each worker process spent self-fenced, taking no work, by worker and pool."))
	if e[0] == nil && e[1] == nil {
		_, e[2] = meter.RegisterCallback(m.observeFencing, c.fences, c.seconds)
	}
	return errors.Join(e[:]...)
}

func (m *Metrics) observeFencing(_ context.Context, o metric.Observer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, f := range m.snap.Fencing {
		a := metric.WithAttributes(attribute.String("worker", f.Worker), attribute.String("pool", f.Pool))
		o.ObserveInt64(m.fencing.fences, int64(f.Fences), a)
		o.ObserveFloat64(m.fencing.seconds, f.Seconds, a)
	}
	return nil
}
