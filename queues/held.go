package queues

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// HeldDelivery is an attempt whose asynq task a worker has taken (the task
// is active) while the job's record still says queued at that attempt: the
// worker has not claimed it.
type HeldDelivery struct {
	JobID   string
	Attempt int
	Queue   Queue
}

// TaskID is the asynq task ID of the attempt.
func (h HeldDelivery) TaskID() string { return TaskID(h.JobID, h.Attempt) }

// HeldDeliveries lists the attempts taken but not claimed, in every queue
// of the namespace. A live worker claims within milliseconds of taking a
// task, so one seen held for seconds belongs to a worker that died or froze
// between the two: no worker's record holds it, so dead-worker recovery
// does not see it, and only asynq's own lease (30 s, checked about once a
// minute) would give it back. The caller moves such attempts on (Move),
// after seeing them held for longer than a claim takes.
func (s *Store) HeldDeliveries(ctx context.Context) ([]HeldDelivery, error) {
	names, err := s.insp.Queues()
	if err != nil {
		return nil, wrap("queues.HeldDeliveries", err)
	}
	// Task IDs are "jobID:attempt" (TaskID), so the active lists alone
	// name the attempts: no task message needs reading.
	var cands []HeldDelivery
	for _, name := range names {
		q, ok := s.ns.LogicalQueue(name)
		if !ok {
			continue
		}
		ids, err := s.rdb.LRange(ctx, asynqActiveKey(name), 0, -1).Result()
		if err != nil {
			return nil, wrap("queues.HeldDeliveries", err)
		}
		for _, id := range ids {
			job, n, ok := strings.Cut(id, ":")
			attempt, err := strconv.Atoi(n)
			if ok && err == nil && jobs.ValidID(job) {
				cands = append(cands, HeldDelivery{JobID: job, Attempt: attempt, Queue: q})
			}
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.SliceCmd, len(cands))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range cands {
			cmds[i] = p.HMGet(ctx, s.ns.Job(c.JobID), "state", "attempt")
		}
		return nil
	}); err != nil {
		return nil, wrap("queues.HeldDeliveries", err)
	}
	var held []HeldDelivery
	for i, c := range cands {
		v := cmds[i].Val()
		if len(v) != 2 {
			continue
		}
		state, _ := v[0].(string)
		attempt, _ := v[1].(string)
		if state == string(jobs.StateQueued) && attempt == strconv.Itoa(c.Attempt) {
			held = append(held, c)
		}
	}
	return held, nil
}
