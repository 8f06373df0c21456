package queues

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// recordQoSScript stores an attempt's cgroup counters in its record, fenced
// like a checkpoint: only the running attempt's worker may write them.
// KEYS: job. ARGV: attempt, worker, stats (JSON).
var recordQoSScript = redis.NewScript(`
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "worker")
if st[1] ~= "running" or tonumber(st[2]) ~= tonumber(ARGV[1]) or st[3] ~= ARGV[2] then return 0 end
redis.call("HSET", KEYS[1], "qos", ARGV[3])
return 1
`)

// RecordQoS stores what the running attempt's cgroup counted, before the
// worker settles the attempt. It returns false when the attempt is no
// longer this worker's.
func (s *Store) RecordQoS(ctx context.Context, j jobs.Job, worker string, st jobs.QoSStats) (bool, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return false, fmt.Errorf("queues.RecordQoS: job %s: %w", j.ID, err)
	}
	n, err := recordQoSScript.Run(ctx, s.rdb, []string{s.ns.Job(j.ID)}, j.Attempt, worker, string(b)).Int()
	if err != nil {
		return false, wrap("queues.RecordQoS", err)
	}
	return n == 1, nil
}
