package queues

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// historyPage is how many records History reads per round trip.
const historyPage = 1000

// History calls fn for every job created in [since, until) whose record is
// still kept, oldest first, reading a page at a time so a month of jobs
// never sits in memory at once. The quota planner builds its trace from it.
func (s *Store) History(ctx context.Context, since, until time.Time, fn func(jobs.Job) error) error {
	min := strconv.FormatInt(since.UnixMilli(), 10)
	max := "(" + strconv.FormatInt(until.UnixMilli(), 10)
	for {
		zs, err := s.rdb.ZRangeByScoreWithScores(ctx, s.ns.JobIndex(), &redis.ZRangeBy{Min: min, Max: max, Count: historyPage}).Result()
		if err != nil {
			return wrap("queues.History", err)
		}
		ids := make([]string, len(zs))
		for i, z := range zs {
			ids[i] = z.Member.(string)
		}
		list, err := s.getMany(ctx, ids, func(jobs.Job) bool { return true }, len(ids))
		if err != nil {
			return err
		}
		for _, j := range list {
			if err := fn(j); err != nil {
				return err
			}
		}
		if len(zs) < historyPage {
			return nil
		}
		// The next page starts after the last score read; IDs sharing that
		// millisecond are re-read from it and skipped by ID.
		last := zs[len(zs)-1]
		next, err := s.historyRest(ctx, last, fn)
		if err != nil || next == "" {
			return err
		}
		min = next
	}
}

// historyRest finishes the millisecond of last (members after it in the
// index order) and returns where the next page starts, "" when done.
func (s *Store) historyRest(ctx context.Context, last redis.Z, fn func(jobs.Job) error) (string, error) {
	score := strconv.FormatInt(int64(last.Score), 10)
	same, err := s.rdb.ZRangeByScore(ctx, s.ns.JobIndex(), &redis.ZRangeBy{Min: score, Max: score}).Result()
	if err != nil {
		return "", wrap("queues.History", err)
	}
	var rest []string
	for _, id := range same {
		if id > last.Member.(string) {
			rest = append(rest, id)
		}
	}
	list, err := s.getMany(ctx, rest, func(jobs.Job) bool { return true }, len(rest))
	if err != nil {
		return "", err
	}
	for _, j := range list {
		if err := fn(j); err != nil {
			return "", err
		}
	}
	return "(" + score, nil
}
