package queues

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Attempts on record as running on a worker that its process does not run.
//
// A worker process reports every attempt it runs in each heartbeat, from
// its claim until the record of its end is written (a job leaves the
// process's list only after settling, which retries Redis errors). So an
// attempt the record gives to the worker, claimed long enough ago that any
// claim in flight has returned, and that the process does not report, is
// one of two things:
//
//   - an attempt the process ended and recorded, whose record of the end
//     Redis then lost: a master that failed before its replica received the
//     write, the replica promoted without it. The worker still knows how
//     the attempt ended and records that again (Refinish): the job does not
//     run twice, and its usage ends when it really ended.
//   - an attempt the process never ran: an older process of the ID, paused
//     across a takeover, claimed it on waking and stopped it unrecorded, or
//     a claim whose reply was lost and whose delivery asynq gave up on. It
//     is requeued (RequeueUnrecorded), as a dead worker's attempts are; a
//     gang's only once the worker of every member says the same (see
//     requeueUnrecordedScript).
//
// Each beat names such attempts (Beat.Unrecorded) and changes nothing; the
// worker, which alone knows which it ended, does one or the other. Without
// this a lost end left its job running on a live worker for ever: the
// worker's beats kept it alive, and no recovery looked at it.

// orphanGrace is how long after its claim an attempt on record for a worker
// ID must be missing from that ID's heartbeats before a beat names it. A
// claim is added to the worker's running set at once, so this only has to
// outlast one beat's round trip (bounded at 2 s) and a claim retried after
// a lost reply, with margin.
const orphanGrace = 10 * time.Second

// unrecordedLua defines unrecordedAttempt(jobKey, worker, beforeMs) -> the
// attempt the record gives to worker (its own, or a member of its gang's),
// claimed before beforeMs, and the job's gang size (0 for none); or nil.
// A claim retried after a lost reply stamps "reclaimed" (claimScript,
// takeScript, memberClaimScript): the process holds the attempt again from
// then, and it counts as claimed then. Prepend gangLua.
var unrecordedLua = "local orphanGraceMs = " + strconv.FormatInt(orphanGrace.Milliseconds(), 10) + `
local function unrecordedAttempt(k, worker, before)
  local st = redis.call("HMGET", k, "state", "worker", "started", "attempt", "reclaimed")
  if st[1] ~= "running" or not tonumber(st[3]) or tonumber(st[3]) >= before then return nil end
  if tonumber(st[5]) and tonumber(st[5]) >= before then return nil end
  if st[2] ~= worker and not gangMember(k, worker, st[4]) then return nil end
  return tonumber(st[4]), gangSize(k)
end
`

// gangMarkKeep is how long a worker's word that it runs no member of a
// gang's attempt counts (see gangRunsNowhereLua). Its beats say it again
// every Heartbeat while the attempt is on record for it, so an older word
// is from a worker that stopped saying it, for whatever reason.
const gangMarkKeep = 3 * orphanGrace

// gangRunsNowhereLua defines gangRunsNowhere(jobKey, worker, attempt, n,
// nowMs, workersKey): it notes, on each member of the gang's attempt that
// worker holds, that worker runs none of them (field u<i>, "attempt|ms",
// named by its attempt like the other gang fields, so a new attempt needs
// no clean-up), and reports whether the attempt runs nowhere: every member
// is either ended (d<i>), noted so within gangMarkKeep and since the last
// claim retried ("reclaimed"), or held by a worker no longer registered
// (one that left runs nothing, and no recovery looks at it). Prepend
// unrecordedLua and gangLua.
//
// The times are the workers' own clocks (the stores' Now, as every stamp
// of a claim is), so the check assumes they agree to within seconds, as
// orphanGrace already does: a worker whose clock runs ahead by d has its
// word counted for gangMarkKeep plus d.
var gangRunsNowhereLua = "local gangMarkKeepMs = " + strconv.FormatInt(gangMarkKeep.Milliseconds(), 10) + `
local function gangRunsNowhere(k, worker, a, n, now, workers)
  local pre = tostring(a) .. "|"
  local since = math.max(now - gangMarkKeepMs, tonumber(redis.call("HGET", k, "reclaimed")) or 0)
  local nowhere = true
  for i = 0, n - 1 do
    local m = redis.call("HGET", k, "m" .. i)
    if m == pre .. worker then
      redis.call("HSET", k, "u" .. i, pre .. now)
    elseif redis.call("HGET", k, "d" .. i) == pre .. "1" then
      -- ended: its worker recorded its exit 0
    elseif m and string.sub(m, 1, #pre) == pre and not redis.call("ZSCORE", workers, string.sub(m, #pre + 1)) then
      -- its worker left
    else
      local u = redis.call("HGET", k, "u" .. i)
      local at = u and string.sub(u, 1, #pre) == pre and tonumber(string.sub(u, #pre + 1))
      if not at or at <= since then nowhere = false end
    end
  end
  return nowhere
end
`

// requeueUnrecordedScript requeues the named attempts that the record
// still gives to the worker as unrecorded ones (unrecordedAttempt, at the
// same attempt), as recovery requeues a dead worker's. A process whose ID
// was fenced or taken over since its beat requeues nothing: the attempts
// it does not know of may be the new process's.
//
// A gang's attempt is requeued only once it runs nowhere
// (gangRunsNowhere): every member's worker must have said so, not the
// caller alone. A member's worker that runs no member may have handed a
// drain to member 0, which is checkpointing the gang; or it stopped its
// member because another member's failure ended the gang, whose end a
// failover lost and whose worker records it again (Refinish). In both
// the worker of another member has not said so (it runs its member, or it
// ended it and records that instead). When all have, the gang's end or
// move was lost (a retry, a preemption, a drain's checkpoint, or an end
// no worker remembers), and requeuing it does what the lost move did,
// less its checkpoint and reason.
// KEYS: workerJobs, outbox, active, usage, tombstone, incarnation, workers.
// ARGV: worker, now, jobKeyPrefix, workerKeyPrefix, retentionMs,
// incarnation, then id, attempt per job.
// Returns {id, newAttempt, queue, ...} as requeueJobs does.
var requeueUnrecordedScript = redis.NewScript(usageLua + gangLua + requeueWorkerJobsLua + claimFenceLua + unrecordedLua + gangRunsNowhereLua + `
if claimFenced(KEYS[5], KEYS[6], ARGV[6]) then return {} end
local now = tonumber(ARGV[2])
local ids, gangs = {}, {}
for i = 7, #ARGV, 2 do
  local k = ARGV[3] .. ARGV[i]
  local a, gang = unrecordedAttempt(k, ARGV[1], now - orphanGraceMs)
  if a and a == tonumber(ARGV[i + 1]) then
    if gang < 2 then
      table.insert(ids, ARGV[i])
    elseif gangRunsNowhere(k, ARGV[1], a, gang, now, KEYS[7]) then
      table.insert(gangs, ARGV[i])
    end
  end
end
local out = requeueJobs(ids, ARGV[1], KEYS[1], ARGV[3], ARGV[4], KEYS[2], KEYS[3], KEYS[4], ARGV[2], ARGV[2], ARGV[5],
  "did not run it (its process stopped it unrecorded)")
for _, v in ipairs(requeueJobs(gangs, ARGV[1], KEYS[1], ARGV[3], ARGV[4], KEYS[2], KEYS[3], KEYS[4], ARGV[2], ARGV[2], ARGV[5],
  "ran no member of it, nor did the gang's other workers (its end or move was lost)")) do
  table.insert(out, v)
end
return out
`)

// RequeueUnrecorded requeues attempts a beat named as unrecorded
// (Beat.Unrecorded) that the worker's process did not end: it never ran
// them. Each is requeued only if the record still gives it to the worker at
// that attempt, and nothing is when the worker's identity or incarnation
// (w.Incarnation, "" for none) was fenced or taken over since. A gang's
// attempt is requeued by the call that finds every member's worker has
// said it runs none of it (each says so with this call); until then the
// call only notes the worker's word. The next attempts are enqueued before
// it returns.
func (s *Store) RequeueUnrecorded(ctx context.Context, w WorkerInfo, attempts []Delivery) ([]Recovered, error) {
	if len(attempts) == 0 {
		return nil, nil
	}
	inc := w.Incarnation
	if inc == "" {
		inc = "-" // as beat registers it
	}
	args := []any{w.ID, s.opts.Now().UnixMilli(), s.ns.JobPrefix(), s.ns.WorkerPrefix(), s.opts.Retention.Milliseconds(), inc}
	for _, d := range attempts {
		args = append(args, d.JobID, d.Attempt)
	}
	v, err := requeueUnrecordedScript.Run(ctx, s.rdb, []string{s.ns.WorkerJobs(w.ID), s.ns.Outbox(), s.ns.ActiveJobs(), s.ns.usage(),
		s.ns.WorkerTombstone(w.ID), s.ns.WorkerIncarnation(w.ID), s.ns.Workers()}, args...).Slice()
	if err != nil {
		return nil, wrap("queues.RequeueUnrecorded", err)
	}
	rs := requeuedList(v, w.ID)
	return rs, s.enqueueRequeued(ctx, rs)
}

// Ended is how an attempt ended, as its worker recorded it: what Refinish
// records again when Redis lost that record.
type Ended struct {
	JobID   string
	Attempt int
	Worker  string // the worker ID the attempt was claimed under
	// Member is the gang member's index; -1 for a job that is no gang.
	Member   int
	State    jobs.State
	ExitCode *int
	Error    string
	// At is when it ended: the usage record ends there, not at the repair.
	At time.Time
}

// Refinish records e again, as Finish (FinishMember for a gang member)
// recorded it at e.At. It is for an attempt a beat named as unrecorded
// that the worker did end: Redis lost the record of its end. Like Finish it
// writes nothing when the attempt is not the worker's any more, and
// reports whether the end is on record.
func (s *Store) Refinish(ctx context.Context, e Ended) (bool, error) {
	member := ""
	if e.Member >= 0 {
		member = strconv.Itoa(e.Member)
	}
	n, err := s.finish(ctx, jobs.Job{ID: e.JobID, Attempt: e.Attempt}, e.Worker, member, e.State, e.ExitCode, e.Error, e.At)
	if err != nil {
		return false, err
	}
	return n == 1 || n == 2 || n == 3, nil
}
