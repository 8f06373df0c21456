package gangs

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// memberClaimScript gives member i of a queued gang's attempt to a worker.
// Fenced like the kernel's claim (tombstone, incarnation); the worker must
// be the one the placement names for member i. A retry of this
// incarnation's own claim whose reply was lost finds the member already
// held by the worker and gets the record again, queued or running.
// KEYS: job, outbox, workerJobs, tombstone, worker, incarnation.
// ARGV: id, attempt, worker, now, incarnation ("" = unchecked), member, n,
// coord (member 0 only), workerKeyPrefix.
// Returns the record as a flat HGETALL list when claimed, else a reason.
var memberClaimScript = redis.NewScript(queues.ClaimFenceLua + `
if claimFenced(KEYS[4], KEYS[6], ARGV[5]) then return "fenced" end
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "ob", "placed")
if not st[1] then return "gone" end
if tonumber(st[2]) ~= tonumber(ARGV[2]) then return "stale" end
local mk = "m" .. ARGV[6]
local tag = ARGV[2] .. "|" .. ARGV[3]
local cur = redis.call("HGET", KEYS[1], mk)
if cur == tag and ARGV[5] ~= "" and (st[1] == "queued" or st[1] == "running") then
  -- The member is this process's again: stamped as the kernel's claim
  -- does, so no beat takes it for one no worker runs (queues/unrecorded.go).
  if st[1] == "running" then redis.call("HSET", KEYS[1], "reclaimed", ARGV[4]) end
  return redis.call("HGETALL", KEYS[1])
end
if st[1] ~= "queued" then return "stale" end
local pre = ARGV[2] .. "|"
if cur and string.sub(cur, 1, #pre) == pre then return "stale" end
-- The placement of this attempt must name this worker for this member.
if not st[4] or string.sub(st[4], 1, #pre) ~= pre then return "stale" end
local i, named = 0, nil
for w in string.gmatch(string.sub(st[4], #pre + 1), "[^,]+") do
  if i == tonumber(ARGV[6]) then named = w end
  i = i + 1
end
if named ~= ARGV[3] then return "stale" end
local n = tonumber(ARGV[7])
redis.call("HSET", KEYS[1], mk, tag, "gang", n)
if ARGV[6] == "0" then redis.call("HSET", KEYS[1], "coord", pre .. ARGV[8]) end
redis.call("SADD", KEYS[3], ARGV[1])
local first
for m = 0, n - 1 do
  local v = redis.call("HGET", KEYS[1], "m" .. m)
  if not v or string.sub(v, 1, #pre) ~= pre then return redis.call("HGETALL", KEYS[1]) end
  if m == 0 then first = string.sub(v, #pre + 1) end
end
-- The n-th claim: the gang runs, on record under member 0's worker.
local f = {"state", "running", "worker", first, "started", ARGV[4],
  "pool", redis.call("HGET", ARGV[9] .. first, "pool") or ""}
if st[3] == "1" then
  redis.call("ZREM", KEYS[2], ARGV[1])
  table.insert(f, "ob"); table.insert(f, "0")
end
redis.call("HSET", KEYS[1], unpack(f))
redis.call("HINCRBY", KEYS[1], "runs", 1)
return redis.call("HGETALL", KEYS[1])
`)

// ClaimMember claims member d.Member of a gang of n for worker
// (incarnation as in queues.Store.ClaimAs); coord is the coordinator
// address member 0's worker chose (ignored for other members). It returns
// the record, which is still queued until the gang's last member is
// claimed, or ok=false for a stale delivery. A worker joins its gang with
// Member.Join, which calls this.
func (s *Store) ClaimMember(ctx context.Context, d queues.Delivery, n int, worker, incarnation, coord string) (jobs.Job, bool, error) {
	if n < 2 || d.Member < 0 || d.Member >= n {
		return jobs.Job{}, false, fmt.Errorf("gangs.ClaimMember %s: member %d of %d", queues.TaskID(d.JobID, d.Attempt), d.Member, n)
	}
	ns := s.k.Namespace()
	// Durable, as a lone job's claim: a member joins its gang's barrier
	// only once the replicas hold its claim.
	v, err := s.k.RunDurable(ctx, memberClaimScript,
		[]string{ns.Job(d.JobID), ns.Outbox(), ns.WorkerJobs(worker), ns.WorkerTombstone(worker), ns.Worker(worker),
			ns.WorkerIncarnation(worker)},
		d.JobID, d.Attempt, worker, s.k.Now().UnixMilli(), incarnation, d.Member, n, coord, ns.WorkerPrefix()).Result()
	if err != nil {
		return jobs.Job{}, false, queues.WrapClaim("gangs.ClaimMember", err)
	}
	if v == "fenced" {
		return jobs.Job{}, false, fmt.Errorf("gangs.ClaimMember %s by %s: %w", queues.MemberTaskID(d.JobID, d.Attempt, d.Member), worker, queues.ErrFenced)
	}
	list, ok := v.([]any)
	if !ok {
		return jobs.Job{}, false, nil
	}
	j, err := queues.DecodeRecord(d.JobID, queues.Pairs(list))
	return j, err == nil, err
}
