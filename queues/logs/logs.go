package logs

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// Store reads and appends job output lines through a queues.Kernel.
type Store struct{ k queues.Kernel }

// New returns the log store of k's namespace.
func New(k queues.Kernel) *Store { return &Store{k: k} }

// Line is one line of a job's output.
type Line struct {
	// ID is the stream entry ID; pass the last one seen to Logs to follow.
	ID      string `json:"id"`
	Attempt int    `json:"attempt"`
	Stream  string `json:"stream"` // "stdout" or "stderr"
	Text    string `json:"text"`
}

// AppendLogs adds lines to a job's log, keeping about max lines.
func (s *Store) AppendLogs(ctx context.Context, jobID string, lines []Line, max int64) error {
	if len(lines) == 0 {
		return nil
	}
	key := s.k.Namespace().JobLog(jobID)
	_, err := s.k.Redis().Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, l := range lines {
			p.XAdd(ctx, &redis.XAddArgs{Stream: key, MaxLen: max, Approx: true,
				Values: []any{"a", l.Attempt, "s", l.Stream, "t", l.Text}})
		}
		return nil
	})
	return queues.Wrap("logs.AppendLogs", err)
}

// Logs returns up to count lines of a job's log after the entry ID after
// ("" = from the start).
func (s *Store) Logs(ctx context.Context, jobID, after string, count int64) ([]Line, error) {
	start := "-"
	if after != "" {
		start = "(" + after
	}
	msgs, err := s.k.Redis().XRangeN(ctx, s.k.Namespace().JobLog(jobID), start, "+", count).Result()
	if err != nil {
		return nil, queues.Wrap("logs.Logs", err)
	}
	out := make([]Line, len(msgs))
	for i, m := range msgs {
		a, _ := strconv.Atoi(str(m.Values["a"]))
		out[i] = Line{ID: m.ID, Attempt: a, Stream: str(m.Values["s"]), Text: str(m.Values["t"])}
	}
	return out, nil
}

// str reads a stream field; a missing or odd one reads as "".
func str(v any) string {
	s, _ := v.(string)
	return s
}
