package queues

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// MarkStarted records at as the moment Ballast started in this namespace,
// unless a moment is recorded already, and returns the one recorded. The
// controller calls it when it first leads; SET NX keeps the first call's
// moment for good, so a restart, a second controller or a new leader does
// not move it.
func (s *Store) MarkStarted(ctx context.Context, at time.Time) (time.Time, error) {
	ms := at.UnixMilli()
	// SET NX GET needs Redis 7; SET NX then GET works on 6.2, and the GET
	// only ever reads a value that no later call changes.
	if err := s.rdb.SetNX(ctx, s.ns.Started(), strconv.FormatInt(ms, 10), 0).Err(); err != nil {
		return time.Time{}, wrap("queues.MarkStarted", err)
	}
	return s.Started(ctx)
}

// Started returns when Ballast started in this namespace (MarkStarted), or
// the zero time when no controller has led it yet.
func (s *Store) Started(ctx context.Context) (time.Time, error) {
	v, err := s.rdb.Get(ctx, s.ns.Started()).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, wrap("queues.Started", err)
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, wrap("queues.Started", err)
	}
	return msUTC(ms), nil
}
