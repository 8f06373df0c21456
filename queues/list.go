package queues

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// ListOptions filters List.
type ListOptions struct {
	// Limit is the most jobs returned, newest first (default 50, at most 1000).
	Limit int
	// State keeps only jobs in this state ("" = all).
	State jobs.State
	// Template, Team and Labels keep only jobs of this template, charged
	// to this team, carrying every one of these labels ("" or nil = all).
	Template string
	Team     string
	Labels   map[string]string
	// Since keeps only jobs created at or after it (zero = all). The index
	// is ordered by creation, so the scan stops at the first older job.
	Since time.Time
	// Scan is how many of the newest jobs are examined when filtering
	// (default 10×Limit): a bound, so a listing never reads the whole
	// history.
	Scan int
}

// filtered reports whether any filter besides the limit is set.
func (o ListOptions) filtered() bool {
	return o.State != "" || o.Template != "" || o.Team != "" || len(o.Labels) > 0
}

// keeps reports whether j passes every filter of o.
func (o ListOptions) keeps(j jobs.Job) bool {
	switch {
	case o.State != "" && j.State != o.State,
		o.Template != "" && j.Spec.Template != o.Template,
		o.Team != "" && j.Spec.Team != o.Team,
		!o.Since.IsZero() && j.CreatedAt.Before(o.Since):
		return false
	}
	for k, v := range o.Labels {
		if got, ok := j.Spec.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
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
	if o.filtered() {
		scan = o.Scan
		if scan <= 0 {
			scan = 10 * o.Limit
		}
	}
	var ids []string
	var err error
	if o.Since.IsZero() {
		ids, err = s.rdb.ZRevRange(ctx, s.ns.JobIndex(), 0, int64(scan-1)).Result()
	} else {
		ids, err = s.rdb.ZRevRangeByScore(ctx, s.ns.JobIndex(), &redis.ZRangeBy{Max: "+inf",
			Min: strconv.FormatInt(o.Since.UnixMilli(), 10), Count: int64(scan)}).Result()
	}
	if err != nil {
		return nil, wrap("queues.List", err)
	}
	return s.getMany(ctx, ids, o.keeps, o.Limit)
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
