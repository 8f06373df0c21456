package queues

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// resignScript gives up the lease only if the candidate still holds it.
var resignScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0
`)

// AcquireLeadership takes or renews the controller lease for candidate. Only
// the holder acts; a crashed leader's lease runs out after ttl and another
// controller takes over.
func (s *Store) AcquireLeadership(ctx context.Context, candidate string, ttl time.Duration) (bool, error) {
	n, err := leaderScript.Run(ctx, s.rdb, []string{s.ns.Leader()}, candidate, ttl.Milliseconds()).Int()
	if err != nil {
		return false, wrap("queues.AcquireLeadership", err)
	}
	return n == 1, nil
}

// ResignLeadership releases the lease at a clean stop, so the next controller
// need not wait for it to expire.
func (s *Store) ResignLeadership(ctx context.Context, candidate string) error {
	return wrap("queues.ResignLeadership", resignScript.Run(ctx, s.rdb, []string{s.ns.Leader()}, candidate).Err())
}

// Leader returns the current leader, "" if none.
func (s *Store) Leader(ctx context.Context) (string, error) {
	v, err := s.rdb.Get(ctx, s.ns.Leader()).Result()
	if err == redis.Nil {
		return "", nil
	}
	return v, wrap("queues.Leader", err)
}
