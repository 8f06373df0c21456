package cli

import (
	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	usagestore "github.com/ballastdev/ballast/queues/usage"
)

// insightSource is the insight.Source of a loaded config. The conversion
// lives here, in the command layer, so insight does not import config.
func insightSource(store *queues.Store, cfg config.Config) insight.Source {
	pc := cfg.PolicyConfig()
	return insight.Source{Store: store, Accounting: usagestore.New(store), Registry: registry.New(store), Pools: cfg.PolicyPools(), Quota: cfg.FixedQuota(), High: pc.High, Low: pc.Low,
		CoreOverflow: pc.CoreOverflow, CoreMaxWait: pc.CoreMaxWait,
		Retention: cfg.Controller.CostRetention.Std(), Engines: enginesOf(cfg),
		Shares: cfg.TeamShares(), Chargeback: chargebackOf(cfg)}
}

// chargebackOf is the ledger's charge-back rule of a config.
func chargebackOf(cfg config.Config) cost.Chargeback {
	rule, price := cfg.ChargebackTerms()
	return cost.Chargeback{Rule: rule, LoanPrice: &price}
}

// enginesOf is what the overview says of a config's NATS and provider.
func enginesOf(cfg config.Config) insight.Engines {
	return insight.EnginesOf(cfg.NATS.URL, cfg.NATS.Stream, cfg.NATS.StreamReplicas, cfg.Provider.Kind)
}
