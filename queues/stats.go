package queues

import (
	"context"
	"errors"
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

// QueueStats reads the depth of every queue.
func (s *Store) QueueStats(ctx context.Context) ([]QueueStats, error) {
	out := make([]QueueStats, 0, len(Queues))
	for _, q := range Queues {
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
