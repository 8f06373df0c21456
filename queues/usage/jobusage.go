package usage

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// jobUsageMost bounds the usage entries JobUsage reads for one job: the
// entries of every job that ended an attempt during the job's life are
// read and all but its own skipped, so a long job in a busy installation
// stops there rather than reading a month of usage for one page.
const jobUsageMost = 50000

// JobUsage returns the usage entries of j's ended attempts, oldest first,
// and its running attempt's so far. Entries are scored by their end, so
// only those ending between j's creation and its finish are read; a
// cheap substring test skips other jobs' entries before decoding. It
// reports complete false when it stopped at jobUsageMost entries.
func (s *Store) JobUsage(ctx context.Context, j jobs.Job) (out []AttemptUsage, complete bool, err error) {
	maxScore := "+inf"
	if !j.FinishedAt.IsZero() {
		maxScore = strconv.FormatInt(j.FinishedAt.Add(time.Second).UnixMilli(), 10)
	}
	ended := map[int]bool{}
	needle := `"job":"` + j.ID + `"`
	read := int64(0)
	for read < jobUsageMost {
		ms, err := s.k.Redis().ZRangeByScore(ctx, s.k.Namespace().Usage(), &redis.ZRangeBy{
			Min: strconv.FormatInt(j.CreatedAt.UnixMilli(), 10), Max: maxScore, Offset: read, Count: page}).Result()
		if err != nil {
			return nil, false, queues.Wrap("usage.JobUsage", err)
		}
		read += int64(len(ms))
		for _, m := range ms {
			if !strings.Contains(m, needle) {
				continue
			}
			var e entry
			// Offsets shift when entries are added meanwhile; an attempt
			// read twice is kept once.
			if json.Unmarshal([]byte(m), &e) != nil || e.Job != j.ID || ended[e.Attempt] {
				continue
			}
			ended[e.Attempt] = true
			out = append(out, e.attempt())
		}
		if int64(len(ms)) < page {
			complete = true
			break
		}
	}
	if j.State == jobs.StateRunning && !j.StartedAt.IsZero() && !ended[j.Attempt] {
		out = append(out, RunningUsage(j))
	}
	return out, complete, nil
}
