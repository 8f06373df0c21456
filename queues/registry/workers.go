package registry

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
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
			if start, ok := lifeStart(life); ok {
				w.BilledFrom = start
			}
		}
		w.LastBeat = time.UnixMilli(int64(ids[i].Score)).UTC()
		out = append(out, w)
	}
	return out, nil
}

// lifeStart reads the start of a worker's life from its member in the
// usage ledger's lives, "startMs|pool|slots|id" (the kernel's heartbeat
// builds it; queues.WorkerLife is the whole of it). A member of another
// shape is refused, as the ledger's reader refuses it.
func lifeStart(m string) (time.Time, bool) {
	parts := strings.SplitN(m, "|", 4)
	if len(parts) != 4 {
		return time.Time{}, false
	}
	ms, err1 := strconv.ParseInt(parts[0], 10, 64)
	_, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		return time.Time{}, false
	}
	if ms == 0 {
		return time.Time{}, true
	}
	return time.UnixMilli(ms).UTC(), true
}
