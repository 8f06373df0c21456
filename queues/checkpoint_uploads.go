package queues

import (
	"context"
	"strconv"
	"time"
)

// CheckpointUploadsKept is how many of the newest checkpoint upload times
// the namespace keeps: enough for a steady median and p90, small enough
// to read in one call.
const CheckpointUploadsKept = 1000

// checkpointUploads lists the newest checkpoint upload times in
// milliseconds, newest first.
func (n Namespace) checkpointUploads() string { return n.prefix() + "ckpt:upload_ms" }

// RecordCheckpointUpload notes how long a committed checkpoint took from
// the job's report to its commit (the telemetry histogram's measure), so
// that `ballast simulate --checkpoint-overhead measured` can read it: the
// histogram lives in the collector, not here.
func (s *Store) RecordCheckpointUpload(ctx context.Context, took time.Duration) error {
	key := s.ns.checkpointUploads()
	pipe := s.rdb.TxPipeline()
	pipe.LPush(ctx, key, took.Milliseconds())
	pipe.LTrim(ctx, key, 0, CheckpointUploadsKept-1)
	_, err := pipe.Exec(ctx)
	return wrap("queues.RecordCheckpointUpload", err)
}

// CheckpointUploads returns the recorded upload times, newest first, at
// most CheckpointUploadsKept.
func (s *Store) CheckpointUploads(ctx context.Context) ([]time.Duration, error) {
	vals, err := s.rdb.LRange(ctx, s.ns.checkpointUploads(), 0, CheckpointUploadsKept-1).Result()
	if err != nil {
		return nil, wrap("queues.CheckpointUploads", err)
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
