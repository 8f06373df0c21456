package queues

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Every script that puts a job's attempt in the outbox also sets the
// record's "ob" field to 1; the claim removes the outbox entry only when it
// finds that flag, so the common first attempt, whose task the submit
// script wrote with the record, costs the claim no ZREM. An entry the flag
// misses is harmless: the reconciler finds the job running and drops it.

// confirmScript removes a job from the outbox if its attempt is still the one
// just enqueued (a newer attempt keeps its own entry). KEYS: job, outbox.
// ARGV: id, attempt.
var confirmScript = redis.NewScript(`
if tonumber(redis.call("HGET", KEYS[1], "attempt")) == tonumber(ARGV[2]) then
  redis.call("ZREM", KEYS[2], ARGV[1])
end
return 1
`)

// ReconcileOutbox enqueues the attempts that were recorded as queued but whose
// task was not confirmed within grace: the submitter or mover crashed, or Redis
// failed between the two writes. Claiming removes a job from the outbox, so
// only the rare unconfirmed ones are visited. It returns how many it enqueued
// or confirmed.
func (s *Store) ReconcileOutbox(ctx context.Context, grace time.Duration, batch int) (int, error) {
	if batch <= 0 {
		batch = 200
	}
	cutoff := s.opts.Now().Add(-grace).UnixMilli()
	ids, err := s.rdb.ZRangeByScore(ctx, s.ns.Outbox(), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(cutoff, 10), Count: int64(batch)}).Result()
	if err != nil {
		return 0, wrap("queues.ReconcileOutbox", err)
	}
	done := 0
	for _, id := range ids {
		j, err := s.Get(ctx, id)
		if err != nil {
			if isNotFound(err) {
				s.rdb.ZRem(ctx, s.ns.Outbox(), id)
				continue
			}
			return done, err
		}
		if j.State == jobs.StateQueued {
			if err := s.enqueue(ctx, j); err != nil {
				return done, err
			}
		}
		if err := confirmScript.Run(ctx, s.rdb, []string{s.ns.Job(id), s.ns.Outbox()}, id, j.Attempt).Err(); err != nil {
			return done, wrap("queues.ReconcileOutbox", err)
		}
		done++
	}
	return done, nil
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
