package usage

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// closeOrphanLivesScript closes the open lives, among those given, whose
// worker is no longer registered. The heartbeat opens a life and registers
// its worker in one step, and deregistration and recovery close it in
// theirs, so such a life was left open by something else: a controller of
// an older version recovering the worker, or a registry entry deleted by
// hand. It would otherwise be billed until the retention ends.
// KEYS: workers, livesEnd. ARGV: nowMs, then life members.
var closeOrphanLivesScript = redis.NewScript(`
local n = 0
for i = 2, #ARGV do
  local life = ARGV[i]
  local id = string.match(life, "^[^|]*|[^|]*|[^|]*|(.*)$")
  if id and redis.call("HEXISTS", KEYS[2], life) == 0 and not redis.call("ZSCORE", KEYS[1], id) then
    redis.call("HSET", KEYS[2], life, ARGV[1])
    n = n + 1
  end
end
return n
`)

// TrimAccounting closes the lives their workers left open (see
// closeOrphanLives), then drops usage entries of attempts that ended before
// cutoff and the lives that ended before it. The leader calls it with its cost
// retention; lives still running are kept however old. A launch still
// pending at cutoff is closed at its own start, so it is billed its
// minimum: nothing registered, and no controller saw it gone in all that
// time, so how long it lived is not known.
func (s *Store) TrimAccounting(ctx context.Context, cutoff time.Time) error {
	if err := s.closeOrphanLives(ctx); err != nil {
		return err
	}
	rdb, ns := s.k.Redis(), s.k.Namespace()
	ms := strconv.FormatInt(cutoff.UnixMilli(), 10)
	if err := rdb.ZRemRangeByScore(ctx, ns.Usage(), "-inf", "("+ms).Err(); err != nil {
		return queues.Wrap("usage.TrimAccounting", err)
	}
	pending, err := s.PendingLaunches(ctx)
	if err != nil {
		return err
	}
	for _, l := range pending {
		if l.At.Before(cutoff) {
			if _, err := s.EndLaunch(ctx, l.ID, l.At); err != nil {
				return err
			}
		}
	}
	old, err := rdb.ZRangeByScore(ctx, ns.Lives(), &redis.ZRangeBy{Min: "-inf", Max: "(" + ms}).Result()
	if err != nil || len(old) == 0 {
		return queues.Wrap("usage.TrimAccounting", err)
	}
	ends, err := rdb.HMGet(ctx, ns.LivesEnd(), old...).Result()
	if err != nil {
		return queues.Wrap("usage.TrimAccounting", err)
	}
	var gone []string
	for i, m := range old {
		if v, ok := ends[i].(string); ok {
			if end, _ := strconv.ParseInt(v, 10, 64); end < cutoff.UnixMilli() {
				gone = append(gone, m)
			}
		}
	}
	if len(gone) == 0 {
		return nil
	}
	members := make([]any, len(gone))
	for i, m := range gone {
		members[i] = m
	}
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, ns.Lives(), members...)
		p.HDel(ctx, ns.LivesEnd(), gone...)
		return nil
	})
	return queues.Wrap("usage.TrimAccounting", err)
}

// closeOrphanLives ends, now, the open lives whose worker left the registry
// without closing them (see closeOrphanLivesScript). They are found in Go
// and checked again in the script, so Redis is held only for the few open
// ones.
func (s *Store) closeOrphanLives(ctx context.Context) error {
	rdb, ns := s.k.Redis(), s.k.Namespace()
	all, err := rdb.ZRange(ctx, ns.Lives(), 0, -1).Result()
	if err != nil || len(all) == 0 {
		return queues.Wrap("usage.TrimAccounting", err)
	}
	ends, err := rdb.HMGet(ctx, ns.LivesEnd(), all...).Result()
	if err != nil {
		return queues.Wrap("usage.TrimAccounting", err)
	}
	args := []any{s.k.Now().UnixMilli()}
	for i, m := range all {
		if ends[i] == nil {
			args = append(args, m)
		}
	}
	if len(args) == 1 {
		return nil
	}
	return queues.Wrap("usage.TrimAccounting",
		closeOrphanLivesScript.Run(ctx, rdb, []string{ns.Workers(), ns.LivesEnd()}, args...).Err())
}
