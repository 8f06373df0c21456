package cli

import (
	"context"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
)

// storeFor connects to the Redis of a loaded config; the func closes the
// connection.
func storeFor(ctx context.Context, cfg config.Config) (*queues.Store, func(), error) {
	rdb, err := connectRedis(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return newStore(rdb, cfg), func() { rdb.Close() }, nil
}

// openStore loads the config and connects to its Redis, for the read-side
// commands, which go straight to the job store.
func openStore(ctx context.Context, cfgPath string) (*queues.Store, func(), error) {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return nil, nil, err
	}
	return storeFor(ctx, cfg)
}

// openSource opens the store and the live reader the config prices it
// with (advise, cost and top read through it).
func openSource(ctx context.Context, cfgPath string) (insight.Source, func(), error) {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return insight.Source{}, nil, err
	}
	store, closeFn, err := storeFor(ctx, cfg)
	if err != nil {
		return insight.Source{}, nil, err
	}
	return insightSource(store, cfg), closeFn, nil
}
