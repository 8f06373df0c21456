package cli

import (
	"context"
	"sort"

	"github.com/ballastdev/ballast/orchestrator/insight"
	"github.com/ballastdev/ballast/queues"
)

// openStore connects to the configured Redis for the read-side commands,
// which go straight to the job store.
func openStore(ctx context.Context, cfgPath string) (*queues.Store, func(), error) {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return nil, nil, err
	}
	rdb, err := connectRedis(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return newStore(rdb, cfg), func() { rdb.Close() }, nil
}

// openSource opens the store and the live reader the config prices it
// with (advise, cost and top read through it).
func openSource(ctx context.Context, cfgPath string) (insight.Source, func(), error) {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return insight.Source{}, nil, err
	}
	rdb, err := connectRedis(ctx, cfg)
	if err != nil {
		return insight.Source{}, nil, err
	}
	return insight.FromConfig(newStore(rdb, cfg), cfg), func() { rdb.Close() }, nil
}

// sortedKeys returns m's keys in order, so tables print the same each time.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
