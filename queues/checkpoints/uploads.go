package checkpoints

import (
	"context"
	"strconv"
	"time"

	"github.com/ballastdev/ballast/queues"
)

// UploadsKept is how many of the newest checkpoint upload times the
// namespace keeps: enough for a steady median and p90, small enough to
// read in one call.
const UploadsKept = 1000

// RecordUpload notes how long a committed checkpoint took from the job's
// report to its commit (the telemetry histogram's measure), so that
// `ballast simulate --checkpoint-overhead measured` can read it: the
// histogram lives in the collector, not here.
func (s *Store) RecordUpload(ctx context.Context, took time.Duration) error {
	key := s.uploads()
	pipe := s.k.Redis().TxPipeline()
	pipe.LPush(ctx, key, took.Milliseconds())
	pipe.LTrim(ctx, key, 0, UploadsKept-1)
	_, err := pipe.Exec(ctx)
	return queues.Wrap("checkpoints.RecordUpload", err)
}

// Uploads returns the recorded upload times, newest first, at most
// UploadsKept.
func (s *Store) Uploads(ctx context.Context) ([]time.Duration, error) {
	vals, err := s.k.Redis().LRange(ctx, s.uploads(), 0, UploadsKept-1).Result()
	if err != nil {
		return nil, queues.Wrap("checkpoints.Uploads", err)
	}
	out := make([]time.Duration, 0, len(vals))
	for _, v := range vals {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			continue // not ours: a value written by hand is skipped
		}
		out = append(out, time.Duration(ms)*time.Millisecond)
	}
	return out, nil
}
