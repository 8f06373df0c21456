package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/metric"

	"github.com/ballastdev/ballast/orchestrator/control/buslink"
)

// WatchBus exports the health of the process's NATS connection: whether it
// is up, how long it has been down in all, and how many outages it had. A
// rate of the down time over a window is the share of it without events,
// control wake-ups and NATS submissions, which no other series shows: a
// quiet bus and a dead one look the same from the job counters.
func (m *Metrics) WatchBus(link *buslink.Link) error {
	if m == nil || link == nil {
		return nil
	}
	meter := m.provider.Meter(scopeName)
	ns := m.ns
	up, err := meter.Int64ObservableGauge(ns+".nats.connected",
		metric.WithDescription("1 while the process's NATS connection is up, 0 while it is down or closed."))
	if err != nil {
		return fmt.Errorf("telemetry: nats.connected: %w", err)
	}
	down, err := meter.Float64ObservableCounter(ns+".nats.disconnected",
		metric.WithUnit("s"),
		metric.WithDescription("Time the process's NATS connection has been down since the process started, the current outage included."))
	if err != nil {
		return fmt.Errorf("telemetry: nats.disconnected: %w", err)
	}
	outages, err := meter.Int64ObservableCounter(ns+".nats.disconnects",
		metric.WithUnit("{outage}"),
		metric.WithDescription("Times the process's NATS connection was lost."))
	if err != nil {
		return fmt.Errorf("telemetry: nats.disconnects: %w", err)
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := link.State()
		v := int64(0)
		if st.Up {
			v = 1
		}
		o.ObserveInt64(up, v)
		o.ObserveFloat64(down, st.Down.Seconds())
		o.ObserveInt64(outages, int64(st.Disconnects))
		return nil
	}, up, down, outages)
	if err != nil {
		return fmt.Errorf("telemetry: NATS link callback: %w", err)
	}
	return nil
}
