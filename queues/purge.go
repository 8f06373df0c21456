package queues

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// PurgeNamespace deletes every key of a namespace: Ballast's own ("NS:...")
// and asynq's for the namespace's queues ("asynq:{NS.*}..."), and the queues'
// entries in asynq's global queue set. For tests, benchmarks and decommissioning
// an install; never on a namespace in use. The default namespace's asynq
// queues have bare names and are not touched.
func PurgeNamespace(ctx context.Context, c redis.UniversalClient, ns string) error {
	for _, pattern := range []string{ns + ":*", "asynq:{" + ns + ".*"} {
		iter := c.Scan(ctx, 0, pattern, 500).Iterator()
		var batch []string
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == 500 {
				if err := c.Unlink(ctx, batch...).Err(); err != nil {
					return wrap("queues.PurgeNamespace", err)
				}
				batch = batch[:0]
			}
		}
		if err := iter.Err(); err != nil {
			return wrap("queues.PurgeNamespace", err)
		}
		if len(batch) > 0 {
			if err := c.Unlink(ctx, batch...).Err(); err != nil {
				return wrap("queues.PurgeNamespace", err)
			}
		}
	}
	members, err := c.SMembers(ctx, "asynq:queues").Result()
	if err != nil {
		return wrap("queues.PurgeNamespace", err)
	}
	for _, m := range members {
		if strings.HasPrefix(m, ns+".") {
			c.SRem(ctx, "asynq:queues", m)
		}
	}
	return nil
}
