package queues

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// QueueStats is the depth of one queue.
type QueueStats struct {
	Queue     Queue `json:"queue"`
	Pending   int   `json:"pending"`
	Scheduled int   `json:"scheduled"` // waiting for a retry back-off
	// Active is how many attempts delivered from this queue run now, by
	// the job records of the registered workers' running jobs. asynq's
	// own active list does not say: a worker on one Redis takes its
	// deliveries out of asynq as it claims them (see take.go).
	Active int `json:"active"`
	Retry  int `json:"retry"` // asynq redeliveries after infrastructure errors
	// OldestPendingSeconds is the age of the oldest pending task.
	OldestPendingSeconds float64 `json:"oldest_pending_seconds"`
}

// QueueStats reads the depth of every base queue, then of every regional
// queue asynq knows in this namespace (sorted by name). A regional queue
// exists once a job was sent to it; base queues are listed even when unused,
// so status always shows them.
func (s *Store) QueueStats(ctx context.Context) ([]QueueStats, error) {
	names, err := s.insp.Queues()
	if err != nil {
		return nil, wrap("queues.QueueStats", err)
	}
	var regional []Queue
	for _, name := range names {
		if q, ok := s.ns.LogicalQueue(name); ok && q.Region() != "" {
			regional = append(regional, q)
		}
	}
	slices.Sort(regional)
	running, err := s.runningByQueue(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]QueueStats, 0, len(Queues)+len(regional))
	for _, q := range append(slices.Clone(Queues), regional...) {
		info, err := s.insp.GetQueueInfo(s.ns.AsynqQueue(q))
		if err != nil {
			if strings.Contains(err.Error(), "does not exist") || strings.Contains(err.Error(), "not found") {
				out = append(out, QueueStats{Queue: q, Active: running[q]}) // never used yet
				continue
			}
			return nil, wrap("queues.QueueStats", err)
		}
		out = append(out, QueueStats{Queue: q, Pending: info.Pending, Scheduled: info.Scheduled,
			Active: running[q], Retry: info.Retry, OldestPendingSeconds: info.Latency.Seconds()})
	}
	return out, nil
}

// runningByQueue counts the attempts running now by the queue each was
// delivered from: the registered workers' running sets, and the state and
// queue of each job in them (a gang, in every member's set, once). Two
// round trips, and one small read per running job: a status call's cost,
// not a tick's.
func (s *Store) runningByQueue(ctx context.Context) (map[Queue]int, error) {
	workers, err := s.rdb.ZRange(ctx, s.ns.Workers(), 0, -1).Result()
	if err != nil {
		return nil, wrap("queues.QueueStats", err)
	}
	sets := make([]*redis.StringSliceCmd, len(workers))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, w := range workers {
			sets[i] = p.SMembers(ctx, s.ns.WorkerJobs(w))
		}
		return nil
	}); err != nil {
		return nil, wrap("queues.QueueStats", err)
	}
	seen := map[string]bool{}
	var ids []string
	for _, set := range sets {
		for _, id := range set.Val() {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	recs := make([]*redis.SliceCmd, len(ids))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			recs[i] = p.HMGet(ctx, s.ns.Job(id), "state", "queue")
		}
		return nil
	}); err != nil && err != redis.Nil {
		return nil, wrap("queues.QueueStats", err)
	}
	out := map[Queue]int{}
	for _, r := range recs {
		v := r.Val()
		if len(v) == 2 && v[0] == string(jobs.StateRunning) {
			if q, ok := v[1].(string); ok {
				out[Queue(q)]++
			}
		}
	}
	return out, nil
}

func isNotFound(err error) bool { return errors.Is(err, jobs.ErrNotFound) }
