package leader

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// Store takes, renews and gives up the controller lease of a namespace
// through a queues.Kernel.
type Store struct{ k queues.Kernel }

// New returns the lease of k's namespace.
func New(k queues.Kernel) *Store { return &Store{k: k} }

// acquireScript takes or renews the lease. KEYS: leader. ARGV: candidate,
// ttlMs. Returns 1 when the candidate holds the lease.
var acquireScript = redis.NewScript(`
local cur = redis.call("GET", KEYS[1])
if cur == ARGV[1] then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
end
if cur then return 0 end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
return 1
`)

// resignScript gives up the lease only if the candidate still holds it.
// KEYS: leader. ARGV: candidate.
var resignScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0
`)

// Acquire takes or renews the lease for candidate. Only the holder acts; a
// crashed leader's lease runs out after ttl and another controller takes
// over.
func (s *Store) Acquire(ctx context.Context, candidate string, ttl time.Duration) (bool, error) {
	n, err := acquireScript.Run(ctx, s.k.Redis(), []string{s.k.Namespace().Leader()}, candidate, ttl.Milliseconds()).Int()
	if err != nil {
		return false, queues.Wrap("leader.Acquire", err)
	}
	return n == 1, nil
}

// Resign releases the lease at a clean stop, so the next controller need
// not wait for it to expire. A candidate that no longer holds it changes
// nothing.
func (s *Store) Resign(ctx context.Context, candidate string) error {
	return queues.Wrap("leader.Resign", resignScript.Run(ctx, s.k.Redis(), []string{s.k.Namespace().Leader()}, candidate).Err())
}

// Holder returns the controller that holds the lease, "" if none.
func (s *Store) Holder(ctx context.Context) (string, error) {
	v, err := s.k.Redis().Get(ctx, s.k.Namespace().Leader()).Result()
	if err == redis.Nil {
		return "", nil
	}
	return v, queues.Wrap("leader.Holder", err)
}
