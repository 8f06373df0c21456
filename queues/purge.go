package queues

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// PurgeNamespace deletes every key of a namespace: Ballast's own
// ("{NS}:...", and "NS:..." of the layout before hash tags) and asynq's for
// the namespace's queues ("asynq:{NS.*}..."), and the queues' entries in
// asynq's global queue set. For tests, benchmarks and decommissioning an
// install; never on a namespace in use. The default namespace's asynq
// queues have bare names and are not touched.
func PurgeNamespace(ctx context.Context, c redis.UniversalClient, ns string) error {
	n := NewNamespace(ns)
	for _, pattern := range append(n.KeyPatterns(), n.LegacyPrefix()+"*") {
		err := ScanKeys(ctx, c, pattern, func(batch []string) error {
			// One UNLINK per key: asynq's keys of several queues are in
			// several slots, and a cluster refuses one command across them.
			_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range batch {
					p.Unlink(ctx, k)
				}
				return nil
			})
			return err
		})
		if err != nil {
			return wrap("queues.PurgeNamespace", err)
		}
	}
	members, err := c.SMembers(ctx, asynqAllQueues).Result()
	if err != nil {
		return wrap("queues.PurgeNamespace", err)
	}
	for _, m := range members {
		if strings.HasPrefix(m, ns+".") {
			c.SRem(ctx, asynqAllQueues, m)
		}
	}
	return nil
}
