package usage

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// WorkerLife is one worker process's life in the registry: from its start
// (or its launch, when the controller recorded one) to its clean stop, or
// to its last heartbeat when it was found dead.
type WorkerLife struct {
	ID    string    `json:"id"`
	Pool  string    `json:"pool"`
	Slots int       `json:"slots"`
	Start time.Time `json:"start"`
	// End is zero while the worker lives.
	End time.Time `json:"end,omitzero"`
}

// WorkerLives returns the worker lives that overlap [from, until), oldest
// start first.
func (s *Store) WorkerLives(ctx context.Context, from, until time.Time) ([]WorkerLife, error) {
	rdb, ns := s.k.Redis(), s.k.Namespace()
	members, err := rdb.ZRangeByScore(ctx, ns.Lives(), &redis.ZRangeBy{
		Min: "-inf", Max: "(" + strconv.FormatInt(until.UnixMilli(), 10)}).Result()
	if err != nil {
		return nil, queues.Wrap("usage.WorkerLives", err)
	}
	if len(members) == 0 {
		return nil, nil
	}
	ends, err := rdb.HMGet(ctx, ns.LivesEnd(), members...).Result()
	if err != nil {
		return nil, queues.Wrap("usage.WorkerLives", err)
	}
	out := make([]WorkerLife, 0, len(members))
	for i, m := range members {
		l, ok := queues.ParseLife(m)
		if !ok {
			continue
		}
		life := WorkerLife{ID: l.ID, Pool: l.Pool, Slots: l.Slots, Start: l.Start}
		if v, ok := ends[i].(string); ok {
			ms, _ := strconv.ParseInt(v, 10, 64)
			life.End = msUTC(ms)
		}
		if life.End.IsZero() || life.End.After(from) {
			out = append(out, life)
		}
	}
	return out, nil
}
