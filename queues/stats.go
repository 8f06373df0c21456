package queues

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/ballastdev/ballast/jobs"
)

// QueueStats is the depth of one queue.
type QueueStats struct {
	Queue     Queue `json:"queue"`
	Pending   int   `json:"pending"`
	Scheduled int   `json:"scheduled"` // waiting for a retry back-off
	Active    int   `json:"active"`
	Retry     int   `json:"retry"` // asynq redeliveries after infrastructure errors
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
	out := make([]QueueStats, 0, len(Queues)+len(regional))
	for _, q := range append(slices.Clone(Queues), regional...) {
		info, err := s.insp.GetQueueInfo(s.ns.AsynqQueue(q))
		if err != nil {
			if strings.Contains(err.Error(), "does not exist") || strings.Contains(err.Error(), "not found") {
				out = append(out, QueueStats{Queue: q}) // never used yet
				continue
			}
			return nil, wrap("queues.QueueStats", err)
		}
		out = append(out, QueueStats{Queue: q, Pending: info.Pending, Scheduled: info.Scheduled,
			Active: info.Active, Retry: info.Retry, OldestPendingSeconds: info.Latency.Seconds()})
	}
	return out, nil
}

func isNotFound(err error) bool { return errors.Is(err, jobs.ErrNotFound) }
