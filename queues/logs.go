package queues

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// LogLine is one line of a job's output.
type LogLine struct {
	// ID is the stream entry ID; pass the last one seen to Logs to follow.
	ID      string `json:"id"`
	Attempt int    `json:"attempt"`
	Stream  string `json:"stream"` // "stdout" or "stderr"
	Text    string `json:"text"`
}

// AppendLogs adds lines to a job's log, keeping about max lines.
func (s *Store) AppendLogs(ctx context.Context, jobID string, lines []LogLine, max int64) error {
	if len(lines) == 0 {
		return nil
	}
	key := s.ns.JobLog(jobID)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, l := range lines {
			p.XAdd(ctx, &redis.XAddArgs{Stream: key, MaxLen: max, Approx: true,
				Values: []any{"a", l.Attempt, "s", l.Stream, "t", l.Text}})
		}
		return nil
	})
	return wrap("queues.AppendLogs", err)
}

// Logs returns up to count lines of a job's log after the entry ID after
// ("" = from the start).
func (s *Store) Logs(ctx context.Context, jobID, after string, count int64) ([]LogLine, error) {
	start := "-"
	if after != "" {
		start = "(" + after
	}
	msgs, err := s.rdb.XRangeN(ctx, s.ns.JobLog(jobID), start, "+", count).Result()
	if err != nil {
		return nil, wrap("queues.Logs", err)
	}
	out := make([]LogLine, len(msgs))
	for i, m := range msgs {
		a, _ := strconv.Atoi(toString(m.Values["a"]))
		out[i] = LogLine{ID: m.ID, Attempt: a, Stream: toString(m.Values["s"]), Text: toString(m.Values["t"])}
	}
	return out, nil
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}
