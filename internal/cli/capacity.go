package cli

import (
	"log/slog"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/control/telemetry"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	usagestore "github.com/ballastdev/ballast/queues/usage"
	"github.com/ballastdev/ballast/workers"
)

// newCapacity builds the hybrid capacity adapter. prov may be nil: the policy
// still lends, reclaims and migrates between the queues, but nothing is
// launched or released.
// The NATS control wakes a worker for a spot notice the provider reports
// (an interruption taint on a Kubernetes node, an exec list's reclaim_at).
var _ controller.SpotNoticeWaker = workers.NATSControl{}

func newCapacity(cfg config.Config, store *queues.Store, nc *nats.Conn, prov provider.Provider, pub events.Publisher, log *slog.Logger) *controller.Hybrid {
	h := &controller.Hybrid{Store: store, Launches: usagestore.New(store), Registry: registry.New(store), Provider: prov, Pools: cfg.PolicyPools(), Config: cfg.PolicyConfig(), Events: pub, Logger: log,
		RebuildEvery: cfg.Controller.RebuildEvery.Std(), Quota: cfg.FixedSlots()}
	if nc != nil {
		h.Control = workers.NATSControl{Conn: nc, Subjects: subjects(cfg)}
	}
	return h
}

// routerFor is the intake's router: burst work waits for elastic capacity
// when the capacity policy runs, and core work of teams waits in held for
// rule 9 when shares are configured too (only the policy admits it).
func routerFor(cfg config.Config, capacity bool) controller.Router {
	return controller.Router{ElasticManaged: capacity, Held: capacity && cfg.Shares.On()}
}

// shareMetrics is the share view as the share gauges report it.
func shareMetrics(v controller.ShareView) []telemetry.TeamShare {
	out := make([]telemetry.TeamShare, 0, len(v.Teams))
	for _, t := range v.Teams {
		out = append(out, telemetry.TeamShare{Team: t.Team, Share: t.Share, Own: t.Own, OnCommon: t.OnCommon,
			OnLent: t.OnLent, LentTo: t.LentTo, Idle: t.Idle, OwnerWait: t.OwnerWait})
	}
	return out
}
