package queues

import (
	"context"
	"encoding/json"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/jobs"
)

// ListOptions filters List.
type ListOptions struct {
	// Limit is the most jobs returned, newest first (default 50, at most 1000).
	Limit int
	// State keeps only jobs in this state ("" = all).
	State jobs.State
	// Scan is how many of the newest jobs are examined when filtering by
	// state (default 10×Limit): a bound, so a listing never reads the whole
	// history.
	Scan int
}

// List returns recent jobs, newest first.
func (s *Store) List(ctx context.Context, o ListOptions) ([]jobs.Job, error) {
	if o.Limit <= 0 {
		o.Limit = 50
	}
	if o.Limit > 1000 {
		o.Limit = 1000
	}
	scan := o.Limit
	if o.State != "" {
		scan = o.Scan
		if scan <= 0 {
			scan = 10 * o.Limit
		}
	}
	ids, err := s.rdb.ZRevRange(ctx, s.ns.JobIndex(), 0, int64(scan-1)).Result()
	if err != nil {
		return nil, wrap("queues.List", err)
	}
	return s.getMany(ctx, ids, func(j jobs.Job) bool {
		return o.State == "" || j.State == o.State
	}, o.Limit)
}

// ActiveJobs returns every job that has not ended (queued or running), oldest
// first: the controller's view of the work in the system. It is called every
// tick, so it reads only the fields that change, and a job's spec only the
// first time it sees the job.
func (s *Store) ActiveJobs(ctx context.Context) ([]jobs.Job, error) {
	ids, err := s.rdb.ZRange(ctx, s.ns.ActiveJobs(), 0, -1).Result()
	if err != nil {
		return nil, wrap("queues.ActiveJobs", err)
	}
	s.specMu.Lock()
	known := s.specs
	s.specMu.Unlock()
	fields := make([]*redis.SliceCmd, len(ids))
	specs := make([]*redis.StringCmd, len(ids))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			fields[i] = p.HMGet(ctx, s.ns.Job(id), mutableFields...)
			if _, ok := known[id]; !ok {
				specs[i] = p.HGet(ctx, s.ns.Job(id), "spec")
			}
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, wrap("queues.ActiveJobs", err)
	}
	out := make([]jobs.Job, 0, len(ids))
	next := make(map[string]jobs.Spec, len(ids))
	for i, id := range ids {
		vals := fields[i].Val()
		h := make(map[string]string, len(mutableFields))
		for k, v := range vals {
			if str, ok := v.(string); ok {
				h[mutableFields[k]] = str
			}
		}
		j := decodeFields(id, h)
		if j.State == "" || j.State.Terminal() {
			continue // expired, or ended since the index was read
		}
		spec, ok := known[id]
		if !ok {
			if specs[i] == nil || json.Unmarshal([]byte(specs[i].Val()), &spec) != nil {
				continue
			}
		}
		j.Spec = spec
		next[id] = spec
		out = append(out, j)
	}
	// Only active jobs are kept: ended ones fall out here.
	s.specMu.Lock()
	s.specs = next
	s.specMu.Unlock()
	return out, nil
}

// getMany reads records in one round trip, skipping expired ones.
func (s *Store) getMany(ctx context.Context, ids []string, keep func(jobs.Job) bool, limit int) ([]jobs.Job, error) {
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.ns.Job(id))
		}
		return nil
	})
	if err != nil {
		return nil, wrap("queues.List", err)
	}
	out := make([]jobs.Job, 0, min(limit, len(ids)))
	for i, c := range cmds {
		h := c.Val()
		if len(h) == 0 {
			continue // expired after its retention
		}
		j, err := decodeRecord(ids[i], h)
		if err != nil || !keep(j) {
			continue
		}
		out = append(out, j)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// TrimIndex drops index entries older than the retention (their records have
// expired, or soon will).
func (s *Store) TrimIndex(ctx context.Context) error {
	cutoff := s.opts.Now().Add(-s.opts.Retention - jobs.MaxTimeout).UnixMilli()
	return wrap("queues.TrimIndex", s.rdb.ZRemRangeByScore(ctx, s.ns.JobIndex(), "-inf", "("+itoa64(cutoff)).Err())
}
