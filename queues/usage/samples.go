package usage

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// Sample is one value of a measured series at a time.
type Sample struct {
	At    time.Time
	Value float64
}

// RecordSample appends a sample to the series name and drops samples older
// than keep. The leader records the fixed quota's idle share this way once
// a minute, so the advisor can read what metrics scrapers saw without a
// metrics database of its own.
func (s *Store) RecordSample(ctx context.Context, name string, at time.Time, v float64, keep time.Duration) error {
	ms := at.UnixMilli()
	member := strconv.FormatInt(ms, 10) + ":" + strconv.FormatFloat(v, 'g', -1, 64)
	key := s.k.Namespace().Series(name)
	_, err := s.k.Redis().TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, key, redis.Z{Score: float64(ms), Member: member})
		p.ZRemRangeByScore(ctx, key, "-inf", "("+strconv.FormatInt(at.Add(-keep).UnixMilli(), 10))
		return nil
	})
	return queues.Wrap("usage.RecordSample", err)
}

// Samples returns the samples of series name in [from, until], oldest first.
func (s *Store) Samples(ctx context.Context, name string, from, until time.Time) ([]Sample, error) {
	vals, err := s.k.Redis().ZRangeByScore(ctx, s.k.Namespace().Series(name), &redis.ZRangeBy{
		Min: strconv.FormatInt(from.UnixMilli(), 10), Max: strconv.FormatInt(until.UnixMilli(), 10)}).Result()
	if err != nil {
		return nil, queues.Wrap("usage.Samples", err)
	}
	out := make([]Sample, 0, len(vals))
	for _, m := range vals {
		ts, v, ok := strings.Cut(m, ":")
		if !ok {
			continue
		}
		ms, err1 := strconv.ParseInt(ts, 10, 64)
		f, err2 := strconv.ParseFloat(v, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, Sample{At: time.UnixMilli(ms).UTC(), Value: f})
	}
	return out, nil
}
