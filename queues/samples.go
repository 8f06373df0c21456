package queues

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
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
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, s.ns.series(name), redis.Z{Score: float64(ms), Member: member})
		p.ZRemRangeByScore(ctx, s.ns.series(name), "-inf", "("+strconv.FormatInt(at.Add(-keep).UnixMilli(), 10))
		return nil
	})
	return wrap("queues.RecordSample", err)
}

// Samples returns the samples of series name in [from, until], oldest first.
func (s *Store) Samples(ctx context.Context, name string, from, until time.Time) ([]Sample, error) {
	vals, err := s.rdb.ZRangeByScore(ctx, s.ns.series(name), &redis.ZRangeBy{
		Min: strconv.FormatInt(from.UnixMilli(), 10), Max: strconv.FormatInt(until.UnixMilli(), 10)}).Result()
	if err != nil {
		return nil, wrap("queues.Samples", err)
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
