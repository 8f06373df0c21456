package gangs

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// abandonScript gives up a claimed member whose gang did not start: a gang
// still assembling at attempt moves on as a new, unplaced attempt (the
// controller places it again), and the job leaves the worker's running set
// unless the worker holds a member of the current attempt. Repeatable: a
// retry finds the attempt moved on and only unlists.
// KEYS: job, outbox, workerJobs. ARGV: id, attempt, worker, now, reason.
// Returns the new attempt, or 0 when the gang had started or moved on.
var abandonScript = redis.NewScript(queues.GangLua + `
local st = redis.call("HMGET", KEYS[1], "state", "attempt")
local a = tonumber(st[2])
local moved = 0
if st[1] == "queued" and a == tonumber(ARGV[2]) and gangMember(KEYS[1], ARGV[3], a) then
  a = a + 1
  redis.call("HSET", KEYS[1], "attempt", a, "last_move", ARGV[5], "ob", "1")
  redis.call("ZADD", KEYS[2], ARGV[4], ARGV[1])
  moved = a
end
if not (st[1] == "running" or st[1] == "queued") or not gangMember(KEYS[1], ARGV[3], a) then
  redis.call("SREM", KEYS[3], ARGV[1])
end
return moved
`)

// Abandon gives up member claims of worker for a gang that did not start
// at attempt (see abandonScript). It returns the new attempt, or 0 when
// nothing moved.
func (s *Store) Abandon(ctx context.Context, jobID string, attempt int, worker, reason string) (int, error) {
	ns := s.k.Namespace()
	n, err := abandonScript.Run(ctx, s.k.Redis(), []string{ns.Job(jobID), ns.Outbox(), ns.WorkerJobs(worker)},
		jobID, attempt, worker, s.k.Now().UnixMilli(), reason).Int()
	if err != nil {
		return 0, queues.Wrap("gangs.Abandon", err)
	}
	return n, nil
}
