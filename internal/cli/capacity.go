package cli

import (
	"context"
	"log/slog"
	"sort"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/controller"
	"github.com/ballastdev/ballast/orchestrator/events"
	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/orchestrator/provider"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// policyPools converts the configured pools into the policy's view, in name
// order so plans are deterministic.
func policyPools(cfg config.Config) []policy.Pool {
	names := make([]string, 0, len(cfg.Pools))
	for n := range cfg.Pools {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]policy.Pool, 0, len(names))
	for _, n := range names {
		p := cfg.Pools[n]
		out = append(out, policy.Pool{Name: n, Kind: policy.PoolKind(p.Kind), Region: p.Region,
			PricePerSlotHour: p.PricePerSlotHour, Billing: policy.Billing(p.Billing), MinBilling: p.MinBilling.Std(),
			StartupDelay: p.StartupDelay.Std(), MaxWorkers: p.MaxWorkers, SlotsPerWorker: p.SlotsPerWorker,
			IdleTTL: p.IdleTTL.Std()})
	}
	return out
}

// newCapacity builds the hybrid capacity adapter. prov may be nil: the policy
// still lends, reclaims and migrates between the queues, but nothing is
// launched or released.
func newCapacity(cfg config.Config, store *queues.Store, nc *nats.Conn, prov provider.Provider, pub events.Publisher, log *slog.Logger) *controller.Hybrid {
	pc := policy.DefaultConfig()
	pc.High, pc.Low = cfg.Watermarks.High, cfg.Watermarks.Low
	subj := subjects(cfg)
	h := &controller.Hybrid{Store: store, Provider: prov, Pools: policyPools(cfg), Config: pc, Events: pub, Logger: log,
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
