package queues

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// IdempotencyTTL is how long an idempotency key maps to its job
// (StoreOptions.IdempotencyTTL). The flows store keys sweeps the same way
// and for as long, so a client's retry finds its sweep while it would
// find a job.
func (s *Store) IdempotencyTTL() time.Duration { return s.opts.IdempotencyTTL }

// JobsByKey returns the jobs that idempotency keys map to, by key; a key
// no submission used (or whose mapping expired) is absent. The sweeps
// loop finds through it the trials a fan-out submitted and died before
// recording: the key is written with the job record, so only the job
// store can say what it names.
func (s *Store) JobsByKey(ctx context.Context, keys []string) (map[string]string, error) {
	out := make(map[string]string, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.Get(ctx, s.ns.Idempotency(k))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap("queues.JobsByKey", err)
	}
	for i, c := range cmds {
		// The value is the job's ID and the request's fingerprint.
		if v := c.Val(); v != "" {
			job, _, _ := strings.Cut(v, "|")
			out[keys[i]] = job
		}
	}
	return out, nil
}

// RunTimes returns how long each of the jobs ids that succeeded ran: its
// last attempt's start to finish, the run that finished the work (a job
// resumed from a checkpoint counts only its last stretch). They come in
// the order of ids; jobs that did not succeed or whose record expired are
// left out. The pipelines loop reads it for a step's past runs.
func (s *Store) RunTimes(ctx context.Context, ids []string) ([]time.Duration, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	js, err := s.getMany(ctx, ids, func(j jobs.Job) bool {
		return j.State == jobs.StateSucceeded && !j.StartedAt.IsZero() && j.FinishedAt.After(j.StartedAt)
	}, len(ids))
	if err != nil {
		return nil, wrap("queues.RunTimes", err)
	}
	out := make([]time.Duration, 0, len(js))
	for _, j := range js {
		out = append(out, j.FinishedAt.Sub(j.StartedAt))
	}
	return out, nil
}
