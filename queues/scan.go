package queues

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// scanBatch is how many keys one SCAN step asks for and one callback gets.
const scanBatch = 500

// ScanKeys calls fn with the keys matching pattern, scanBatch at a time. A
// cluster client's SCAN reaches one node only, so on a cluster every master
// is scanned; fn may then be called from several goroutines at once.
func ScanKeys(ctx context.Context, c redis.UniversalClient, pattern string, fn func([]string) error) error {
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return scanNode(ctx, node, pattern, fn)
		})
	}
	return scanNode(ctx, c, pattern, fn)
}

func scanNode(ctx context.Context, c redis.Cmdable, pattern string, fn func([]string) error) error {
	iter := c.Scan(ctx, 0, pattern, scanBatch).Iterator()
	batch := make([]string, 0, scanBatch)
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == scanBatch {
			if err := fn(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return fn(batch)
	}
	return nil
}
