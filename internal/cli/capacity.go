package cli

import (
	"context"
	"log/slog"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/controller"
	"github.com/ballastdev/ballast/orchestrator/events"
	"github.com/ballastdev/ballast/orchestrator/provider"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// newCapacity builds the hybrid capacity adapter. prov may be nil: the policy
// still lends, reclaims and migrates between the queues, but nothing is
// launched or released.
func newCapacity(cfg config.Config, store *queues.Store, nc *nats.Conn, prov provider.Provider, pub events.Publisher, log *slog.Logger) *controller.Hybrid {
	pc := cfg.PolicyConfig()
	subj := subjects(cfg)
	h := &controller.Hybrid{Store: store, Provider: prov, Pools: cfg.PolicyPools(), Config: pc, Events: pub, Logger: log,
		Notify: func(_ context.Context, workerID, jobID string, attempt int, action string) {
			if nc == nil {
				return
			}
			// A wake-up only: the request is already in Redis.
			_ = workers.NotifyControl(nc, subj, workerID, workers.ControlMessage{JobID: jobID, Attempt: attempt,
				Action: workers.ControlAction(action)})
		}}
	if nc != nil {
		h.Drain = func(_ context.Context, workerID string) {
			_ = workers.NotifyControl(nc, subj, workerID, workers.ControlMessage{Action: workers.ControlDrain})
		}
	}
	return h
}
