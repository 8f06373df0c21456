package queues

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// JobBrief is the part of a job record that a parent (a pipeline run, a
// sweep) follows: where the job is and the last metric it reported.
type JobBrief struct {
	State      jobs.State
	LastMetric *float64
}

// JobBriefs reads the state and last metric of many jobs in one round trip.
// Jobs whose record is gone (expired or never written) are absent.
func (s *Store) JobBriefs(ctx context.Context, ids []string) (map[string]JobBrief, error) {
	out := make(map[string]JobBrief, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HMGet(ctx, s.ns.Job(id), "state", "metric")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, wrap("queues.JobBriefs", err)
	}
	for i, c := range cmds {
		v := c.Val()
		st, _ := v[0].(string)
		if st == "" {
			continue
		}
		b := JobBrief{State: jobs.State(st)}
		if m, ok := v[1].(string); ok {
			if f, err := strconv.ParseFloat(m, 64); err == nil {
				b.LastMetric = &f
			}
		}
		out[ids[i]] = b
	}
	return out, nil
}
