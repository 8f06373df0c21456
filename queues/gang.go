package queues

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// A gang (jobs.Size.Gang: Replicas n > 1) is one job of n members placed on
// workers of one region (Place) and started together. Each member's worker
// claims its member with ClaimMember; the record stays queued while the gang
// assembles, and the n-th claim makes it running, with member 0's worker as
// the record's worker. Every member's worker waits for that (GangStarted)
// before it starts its process, so no member runs alone; one that waits past
// GangStartTimeout moves the gang on as a new, unplaced attempt
// (AbandonMember).
//
// The record's gang fields all name the attempt they were written for, as
// "placed" does, so a new attempt needs no clean-up of the last one's:
//
//	gang    n, written by the first claim (the size never changes)
//	m<i>    "attempt|worker" of member i
//	coord   "attempt|host:port" chosen by member 0's worker
//	d<i>    "attempt|1" once member i exited 0
//
// The running gang is fenced on membership: any member's worker may end the
// attempt (a failure, timeout, drain or lost worker requeues the whole gang
// as one new attempt, counted once), and every other member then finds its
// attempt moved on at its next heartbeat and is stopped. Success needs every
// member: each records its own end (d<i>) and the last ends the job, with
// one usage record for the gang. Only member 0 records checkpoints.

// GangStartTimeout bounds how long a claimed member waits for the rest of
// its gang before it moves the gang on.
const GangStartTimeout = 30 * time.Second

// GangPoll is how often a claimed member checks whether its gang started.
const GangPoll = 50 * time.Millisecond

// gangLua defines, for the scripts that fence a gang on membership:
// gangMember(jobKey, worker, attempt) -> member index (0-based) of worker at
// attempt, or nil (also for a job that is no gang); gangWorkers(jobKey,
// attempt) -> the distinct workers of the members claimed at attempt.
const gangLua = keySuffixLua + `
local function gangSize(k)
  return tonumber(redis.call("HGET", k, "gang") or "0") or 0
end
local function gangMember(k, worker, attempt)
  local n = gangSize(k)
  if n < 2 then return nil end
  local tag = tostring(attempt) .. "|" .. worker
  for i = 0, n - 1 do
    if redis.call("HGET", k, "m" .. i) == tag then return i end
  end
  return nil
end
local function gangWorkers(k, attempt)
  local n = gangSize(k)
  local out, seen = {}, {}
  local pre = tostring(attempt) .. "|"
  for i = 0, n - 1 do
    local v = redis.call("HGET", k, "m" .. i)
    if v and string.sub(v, 1, #pre) == pre then
      local w = string.sub(v, #pre + 1)
      if not seen[w] then seen[w] = true; table.insert(out, w) end
    end
  end
  return out
end
-- gangUnlist removes the job from the running set of every member's worker
-- at attempt: wprefix .. worker .. workerJobsSuffix (wprefix is the
-- caller's WorkerPrefix, so the set is in the namespace's slot).
local function gangUnlist(k, id, attempt, wprefix)
  for _, w in ipairs(gangWorkers(k, attempt)) do
    redis.call("SREM", wprefix .. w .. workerJobsSuffix, id)
  end
end
`

// memberClaimScript gives member i of a queued gang's attempt to a worker.
// Fenced like claimScript (tombstone, incarnation); the worker must be the
// one the placement names for member i. A retry of this incarnation's own
// claim whose reply was lost finds the member already held by the worker
// and gets the record again, queued or running.
// KEYS: job, outbox, workerJobs, tombstone, worker, incarnation.
// ARGV: id, attempt, worker, now, incarnation ("" = unchecked), member, n,
// coord (member 0 only), workerKeyPrefix.
// Returns the record as a flat HGETALL list when claimed, else a reason.
var memberClaimScript = redis.NewScript(claimFenceLua + `
if claimFenced(KEYS[4], KEYS[6], ARGV[5]) then return "fenced" end
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "ob", "placed")
if not st[1] then return "gone" end
if tonumber(st[2]) ~= tonumber(ARGV[2]) then return "stale" end
local mk = "m" .. ARGV[6]
local tag = ARGV[2] .. "|" .. ARGV[3]
local cur = redis.call("HGET", KEYS[1], mk)
if cur == tag and ARGV[5] ~= "" and (st[1] == "queued" or st[1] == "running") then
  -- The member is this process's again: stamped as claimScript does, so
  -- no beat takes it for one no worker runs (unrecorded.go).
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

// ClaimMember claims member d.Member of a gang of n for worker (incarnation
// as in ClaimAs); coord is the coordinator address member 0's worker chose
// (ignored for other members). It returns the record, which is still queued
// until the gang's last member is claimed, or ok=false for a stale delivery.
func (s *Store) ClaimMember(ctx context.Context, d Delivery, n int, worker, incarnation, coord string) (jobs.Job, bool, error) {
	if n < 2 || d.Member < 0 || d.Member >= n {
		return jobs.Job{}, false, fmt.Errorf("queues.ClaimMember %s: member %d of %d", TaskID(d.JobID, d.Attempt), d.Member, n)
	}
	v, err := memberClaimScript.Run(ctx, s.rdb,
		[]string{s.ns.Job(d.JobID), s.ns.Outbox(), s.ns.WorkerJobs(worker), s.ns.WorkerTombstone(worker), s.ns.Worker(worker),
			s.ns.WorkerIncarnation(worker)},
		d.JobID, d.Attempt, worker, s.opts.Now().UnixMilli(), incarnation, d.Member, n, coord, s.ns.WorkerPrefix()).Result()
	if err != nil {
		return jobs.Job{}, false, wrap("queues.ClaimMember", err)
	}
	if v == "fenced" {
		return jobs.Job{}, false, fmt.Errorf("queues.ClaimMember %s by %s: %w", MemberTaskID(d.JobID, d.Attempt, d.Member), worker, ErrFenced)
	}
	list, ok := v.([]any)
	if !ok {
		return jobs.Job{}, false, nil
	}
	j, err := decodeRecord(d.JobID, pairsToMap(list))
	return j, err == nil, err
}

// GangState is what a claimed member waits on.
type GangState struct {
	// Started: the gang runs at the member's attempt.
	Started bool
	// Moved: the attempt is over (moved on, ended, or the record is gone);
	// the member must not start.
	Moved bool
	// Coordinator is member 0's address, once started.
	Coordinator string
}

// GangStarted reads whether the gang of jobID started at attempt.
func (s *Store) GangStarted(ctx context.Context, jobID string, attempt int) (GangState, error) {
	v, err := s.rdb.HMGet(ctx, s.ns.Job(jobID), "state", "attempt", "coord").Result()
	if err != nil {
		return GangState{}, wrap("queues.GangStarted", err)
	}
	st, _ := v[0].(string)
	a, _ := v[1].(string)
	coord, _ := v[2].(string)
	if st == "" || atoi(a) != attempt || (st != string(jobs.StateQueued) && st != string(jobs.StateRunning)) {
		return GangState{Moved: true}, nil
	}
	c, ok := strings.CutPrefix(coord, strconv.Itoa(attempt)+"|")
	if st == string(jobs.StateRunning) && ok && c != "" {
		return GangState{Started: true, Coordinator: c}, nil
	}
	return GangState{}, nil
}

// abandonMemberScript gives up a claimed member whose gang did not start:
// a gang still assembling at attempt moves on as a new, unplaced attempt
// (the controller places it again), and the job leaves the worker's running
// set unless the worker holds a member of the current attempt. Repeatable:
// a retry finds the attempt moved on and only unlists.
// KEYS: job, outbox, workerJobs. ARGV: id, attempt, worker, now, reason.
// Returns the new attempt, or 0 when the gang had started or moved on.
var abandonMemberScript = redis.NewScript(gangLua + `
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

// AbandonMember gives up member claims of worker for a gang that did not
// start at attempt (see abandonMemberScript). It returns the new attempt,
// or 0 when nothing moved.
func (s *Store) AbandonMember(ctx context.Context, jobID string, attempt int, worker, reason string) (int, error) {
	n, err := abandonMemberScript.Run(ctx, s.rdb, []string{s.ns.Job(jobID), s.ns.Outbox(), s.ns.WorkerJobs(worker)},
		jobID, attempt, worker, s.opts.Now().UnixMilli(), reason).Int()
	if err != nil {
		return 0, wrap("queues.AbandonMember", err)
	}
	return n, nil
}
