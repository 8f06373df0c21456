package queues

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// MaxMetricsPerJob bounds the values kept per job: a trial printing a metric
// every step must not grow its list without limit. The oldest values go
// first; the last one is also in the record, so it is never lost.
const MaxMetricsPerJob = 10000

// reportMetricScript appends a metric value of the running attempt. It is
// fenced like checkpointScript: a stale attempt or a worker the attempt is no
// longer given to must not add values to the series of the attempt that
// replaced it. The list is only ever written here, while the record exists
// and is running, so the PEXPIRE the record's end gives it cannot be undone
// by a late write.
// KEYS: job, metrics. ARGV: attempt, worker, value, max values kept.
var reportMetricScript = redis.NewScript(`
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "worker")
if st[1] ~= "running" or tonumber(st[2]) ~= tonumber(ARGV[1]) or st[3] ~= ARGV[2] then return 0 end
redis.call("RPUSH", KEYS[2], ARGV[3])
redis.call("LTRIM", KEYS[2], -tonumber(ARGV[4]), -1)
redis.call("HSET", KEYS[1], "metric", ARGV[3])
return 1
`)

// ReportMetric records a metric value of j's running attempt on worker: it
// is appended to the job's series and becomes the record's last metric. It
// returns false, writing nothing, when the attempt is no longer the worker's
// (moved, recovered or ended meanwhile).
func (s *Store) ReportMetric(ctx context.Context, j jobs.Job, worker string, v float64) (bool, error) {
	// NaN and ±Inf have no JSON form: once in the record they would make
	// every encoding of the job fail.
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false, fmt.Errorf("queues.ReportMetric: job %s: %v is not a finite number", j.ID, v)
	}
	n, err := reportMetricScript.Run(ctx, s.rdb, []string{s.ns.Job(j.ID), s.ns.JobMetrics(j.ID)},
		j.Attempt, worker, formatMetric(v), MaxMetricsPerJob).Int()
	if err != nil {
		return false, wrap("queues.ReportMetric", err)
	}
	return n == 1, nil
}

// Metrics returns the metric series of jobs, oldest value first, in one round
// trip. Jobs that reported nothing (or whose series expired) are absent.
func (s *Store) Metrics(ctx context.Context, jobIDs []string) (map[string][]float64, error) {
	out := make(map[string][]float64)
	if len(jobIDs) == 0 {
		return out, nil
	}
	cmds := make([]*redis.StringSliceCmd, len(jobIDs))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range jobIDs {
			cmds[i] = p.LRange(ctx, s.ns.JobMetrics(id), 0, -1)
		}
		return nil
	})
	if err != nil {
		return nil, wrap("queues.Metrics", err)
	}
	for i, c := range cmds {
		vals := c.Val()
		if len(vals) == 0 {
			continue
		}
		series := make([]float64, 0, len(vals))
		for _, str := range vals {
			// Only ReportMetric writes the list, with formatMetric:
			// anything else is not ours, and is skipped like the
			// unreadable fields decodeFields tolerates.
			if f, ok := parseMetric(str); ok {
				series = append(series, f)
			}
		}
		if len(series) > 0 {
			out[jobIDs[i]] = series
		}
	}
	return out, nil
}

// formatMetric is the shortest text that parses back to exactly v.
func formatMetric(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// parseMetric reads a value formatMetric wrote. "" (no metric, the
// common case) is answered before strconv, whose error for it allocates.
func parseMetric(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
