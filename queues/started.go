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
	// SET NX GET needs Redis 7; SET NX then GET works on 6.2, and the GET
	// only ever reads a value that no later call changes.
	if _, err := s.Remark(ctx, at); err != nil {
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

// Remark writes the start marker (Started) at at if it is missing and
// reports whether it was missing. The marker doubles as proof that Redis
// still holds this namespace's data: it is written once and never deleted,
// so a leader that saw it and then finds it gone knows Redis restarted
// empty (no persistence) or was flushed. Jobs and Outbox say how much is
// left, for the message naming what was lost.
func (s *Store) Remark(ctx context.Context, at time.Time) (written bool, err error) {
	written, err = s.rdb.SetNX(ctx, s.ns.Started(), strconv.FormatInt(at.UnixMilli(), 10), 0).Result()
	return written, wrap("queues.Remark", err)
}

// Holdings counts what the namespace holds now: job records in the index
// and attempts waiting in the outbox.
func (s *Store) Holdings(ctx context.Context) (jobs, outbox int64, err error) {
	pipe := s.rdb.Pipeline()
	j := pipe.ZCard(ctx, s.ns.JobIndex())
	o := pipe.ZCard(ctx, s.ns.Outbox())
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, wrap("queues.Holdings", err)
	}
	return j.Val(), o.Val(), nil
}
