package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// Follow feeds every event on the bus to Observe while leading reports
// true: only the leader counts, so two controllers scraped side by side do
// not report each job twice. Unsubscribe the result to stop.
func (m *Metrics) Follow(nc *nats.Conn, subj events.Subjects, leading func() bool) (*nats.Subscription, error) {
	sub, err := nc.Subscribe(subj.All(), func(msg *nats.Msg) {
		var e events.Event
		if json.Unmarshal(msg.Data, &e) == nil && leading() {
			m.Observe(e)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("telemetry: subscribing to %s: %w", subj.All(), err)
	}
	return sub, nil
}

// Poll calls collect every period while leading reports true and hands the
// snapshot to SetSnapshot, until ctx ends. A failed collection keeps the
// previous snapshot: a Redis blip should not blank the dashboards.
func (m *Metrics) Poll(ctx context.Context, every time.Duration, leading func() bool, collect func(context.Context) (Snapshot, error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if leading() {
			cctx, cancel := context.WithTimeout(ctx, every*4)
			if s, err := collect(cctx); err == nil {
				m.SetSnapshot(s)
			}
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
