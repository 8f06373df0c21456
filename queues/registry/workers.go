package registry

import (
	"context"
	"encoding/json"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// Workers lists the registered workers.
func (s *Store) Workers(ctx context.Context) ([]queues.WorkerInfo, error) {
	rdb, ns := s.k.Redis(), s.k.Namespace()
	ids, err := rdb.ZRangeWithScores(ctx, ns.Workers(), 0, -1).Result()
	if err != nil {
		return nil, queues.Wrap("registry.Workers", err)
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, z := range ids {
			cmds[i] = p.HMGet(ctx, ns.Worker(z.Member.(string)), "info", "life")
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, queues.Wrap("registry.Workers", err)
	}
	out := make([]queues.WorkerInfo, 0, len(ids))
	for i, c := range cmds {
		var w queues.WorkerInfo
		vals := c.Val()
		info, _ := vals[0].(string)
		if json.Unmarshal([]byte(info), &w) != nil {
			w.ID = ids[i].Member.(string)
		}
		w.BilledFrom = w.StartedAt
		if life, ok := vals[1].(string); ok {
			if l, ok := queues.ParseLife(life); ok {
				w.BilledFrom = l.Start
			}
		}
		w.LastBeat = time.UnixMilli(int64(ids[i].Score)).UTC()
		out = append(out, w)
	}
	return out, nil
}
