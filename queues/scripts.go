package queues

import (
	"github.com/redis/go-redis/v9"
)

// Each script checks the attempt (the fencing token) before it writes, so
// whichever of two racing actors comes second changes nothing.

// submitScript creates a job record, honouring an idempotency key. The
// job ID is new for every call, so an index entry for it (or its
// idempotency key naming it) means this very call ran before (the client
// resent it after losing the reply): it is answered as new again, and
// nothing is written twice (the task would be pushed twice, and a claimed
// job reset to queued).
// KEYS: job, idem, index, outbox, active[, task, pending]. ARGV: id, spec,
// queue, now, idemTTLms, hasIdem, fingerprint, notBefore, team, template,
// class, totalSlots[, taskMsg, taskID, pendingSinceNs]. Team, template,
// class and the job's total slots (every member of a gang: "tslots", a
// share of a GPU as negative thousandths, see usageSlots) are copied out
// of the spec so the attempt scripts can stamp usage records with them
// without decoding the spec.
// With the task's keys and arguments (see asynqtask.go), the script creates
// the first attempt's asynq task too, so the record never exists without
// it and needs no outbox entry; without them (Redis Cluster, where asynq's
// keys hash to their queue's slot) the caller enqueues after, and the
// outbox covers a crash in between.
// Counters start absent, not at 0: they only ever grow by HINCRBY, and a
// record reads an absent one as 0.
// Returns {"new", id} | {"dup", id} | {"conflict", id}.
var submitScript = redis.NewScript(`
if ARGV[6] == "1" then
  local ex = redis.call("GET", KEYS[2])
  if ex then
    local sep = string.find(ex, "|", 1, true)
    local eid = string.sub(ex, 1, sep - 1)
    if eid == ARGV[1] then return {"new", ARGV[1]} end
    if string.sub(ex, sep + 1) ~= ARGV[7] then return {"conflict", eid} end
    return {"dup", eid}
  end
end
-- The index entry doubles as the check that this call did not run before:
-- the ID is new for every call, so only this call can have added it.
if redis.call("ZADD", KEYS[3], "NX", ARGV[4], ARGV[1]) == 0 then return {"new", ARGV[1]} end
if ARGV[6] == "1" then redis.call("SET", KEYS[2], ARGV[1] .. "|" .. ARGV[7], "PX", ARGV[5]) end
-- The fields go to HSET as they are: a table of them, unpacked, costs
-- Redis as much as a third of the write.
redis.call("HSET", KEYS[1], "spec", ARGV[2], "state", "queued", "attempt", 1, "queue", ARGV[3],
  "created", ARGV[4], "queued", ARGV[4], "not_before", ARGV[8],
  "team", ARGV[9], "template", ARGV[10], "class", ARGV[11], "tslots", ARGV[12])
redis.call("ZADD", KEYS[5], ARGV[4], ARGV[1])
if KEYS[6] then
  redis.call("HSET", KEYS[6], "msg", ARGV[13], "state", "pending", "pending_since", ARGV[15])
  redis.call("LPUSH", KEYS[7], ARGV[14])
else
  redis.call("HSET", KEYS[1], "ob", "1")
  redis.call("ZADD", KEYS[4], ARGV[4], ARGV[1])
end
return {"new", ARGV[1]}
`)

// claimFenceLua defines claimFenced(tombstone, incarnationKey,
// incarnation) for the scripts that give an attempt to a worker: true when
// the controller declared the worker identity dead, or when another
// incarnation holds the ID ("" skips that check). Both keys are plain
// strings, read in one call.
const claimFenceLua = `
local function claimFenced(tomb, incKey, inc)
  local f = redis.call("MGET", tomb, incKey)
  return f[1] ~= false or (inc ~= "" and f[2] ~= false and f[2] ~= inc)
end
`

// claimScript gives the current attempt to a worker. A worker identity the
// controller fenced cannot claim: its jobs would be invisible to recovery.
// The attempt is stamped with the worker's pool, so its usage record says
// where it ran: a burst job on lent fixed capacity and one on elastic
// capacity cost different amounts. The claimant passes its pool, which is
// what its own heartbeats register (the trust is the same); a caller that
// does not know it passes "" and the pool is read from the registration.
// A claim naming an incarnation other than the one registered for the ID
// is fenced too: a process paused past a restart under its --id must not
// start work.
//
// Every call a script makes costs Redis about as much as a small command
// from a client, and so does every value it returns: this one makes four.
// The tombstone and the incarnation are read together (both are plain
// strings), and the record once, by the fields the worker needs
// (claimFields), whose values come back without their names; the caller
// knows what the claim wrote.
// KEYS: job, outbox, workerJobs, tombstone, worker, incarnation.
// ARGV: id, attempt, worker, now, incarnation ("" = unchecked), pool ("" =
// from the registration).
// Returns {"claimed" | "again", pool, values of claimFields...} ("again":
// the retry of a claim already made, values as on record), else a reason
// string.
var claimScript = redis.NewScript(claimFenceLua + `
if claimFenced(KEYS[4], KEYS[6], ARGV[5]) then return "fenced" end
local v = redis.call("HMGET", KEYS[1], ` + luaStrings(claimFields) + `)
if not v[1] then return "gone" end
if tonumber(v[2]) ~= tonumber(ARGV[2]) then return "stale" end
-- A retry of this incarnation's own claim whose reply was lost: claimed
-- already, by it. (The worker refuses a second delivery of an attempt it
-- is running, so this cannot start it twice.)
-- It stamps "reclaimed": the attempt is this process's again, and a beat
-- must not take it for one the process does not run (unrecorded.go).
if v[1] == "running" and v[4] == ARGV[3] and ARGV[5] ~= "" then
  redis.call("HSET", KEYS[1], "reclaimed", ARGV[4])
  return {"again", "", unpack(v)}
end
if v[1] ~= "queued" then return "stale" end
-- A gang starts only through its members' claims (memberClaimScript).
if (tonumber(v[5]) or 0) > 1 then return "stale" end
local pool = ARGV[6]
if pool == "" then pool = redis.call("HGET", KEYS[5], "pool") or "" end
redis.call("HSET", KEYS[1], "state", "running", "worker", ARGV[3], "started", ARGV[4], "pool", pool,
  "runs", tostring((tonumber(v[6]) or 0) + 1))
-- "ob" marks an attempt the outbox holds (see outbox.go); a first
-- attempt written with its task never is.
if v[3] == "1" then
  redis.call("ZREM", KEYS[2], ARGV[1])
  redis.call("HSET", KEYS[1], "ob", "0")
end
redis.call("SADD", KEYS[3], ARGV[1])
return {"claimed", pool, unpack(v)}
`)

// finishScript ends a job. A preemption requested meanwhile is dropped: the
// job ended by itself first, and its own outcome is the truth.
// KEYS: job, workerJobs, log, active, metrics, usage.
// ARGV: id, attempt, worker, state, now, exitCode, error, retentionMs,
// workerKeyPrefix, member (a gang member's index, "" otherwise), departMs
// ("" for none: the end is recorded as it happens). An end recorded long
// after it happened (Refinish) has its usage entry stamped at the end,
// which a reader of changes may have passed: departMs, the time of the
// write, notes the departure where ActiveChanges reads it. A gang's
// member success that is not the last returns 3 (see gang.go). The member
// is named, not looked up by worker: two members may share a worker.
// The log and the metric series expire with the record: they are read only
// through it, and a job's keys must not outlive it. The metric series
// exists only where its writer set the record's "metric" (see
// reportMetricScript), so a job that reported none costs no expiry of a
// key that is not there. The log is expired whatever: it is written
// outside any script, so the record cannot say for sure that none exists.
// Returns 1 when recorded, 0 when the attempt is not this worker's, and 2
// when this very end is already on record: a retry whose first try
// committed but whose reply was lost. Only the worker running an attempt
// ends it, once, so state, attempt and worker together name the end
// exactly, and the caller still announces it.
var finishScript = redis.NewScript(usageLua + gangLua + departLua + `
-- One read for the fence, the usage record (fields 1-10 are usageFields)
-- and what else the end touches.
local r = redis.call("HMGET", KEYS[1], "started", "queued", "checkpoint_at", "pool", "worker", "team", "template", "class",
  "not_before", "tslots", "state", "attempt", "preempt", "gang", "metric")
local state, attempt, worker = r[11], tonumber(r[12]), r[5]
local a = tonumber(ARGV[2])
local gsize = tonumber(r[14]) or 0
local gang = gsize > 1
if gang then
  -- Fenced on membership; success needs every member (see gang.go).
  local g = tonumber(ARGV[10])
  if g then
    if redis.call("HGET", KEYS[1], "m" .. ARGV[10]) ~= ARGV[2] .. "|" .. ARGV[3] then g = nil end
  else
    g = gangMember(KEYS[1], ARGV[3], a)
  end
  if not g or attempt ~= a then return 0 end
  if state == ARGV[4] then return 2 end
  if state ~= "running" then return 0 end
  if ARGV[4] == "succeeded" then
    local doneTag = ARGV[2] .. "|1"
    redis.call("HSET", KEYS[1], "d" .. g, doneTag)
    local n, done, mine = gsize, 0, false
    local tag = ARGV[2] .. "|" .. ARGV[3]
    for m = 0, n - 1 do
      local fin = redis.call("HGET", KEYS[1], "d" .. m) == doneTag
      if fin then done = done + 1 end
      if not fin and redis.call("HGET", KEYS[1], "m" .. m) == tag then mine = true end
    end
    if done < n then
      -- This worker runs no other member of the attempt: recovery of it
      -- no longer concerns the gang.
      if not mine then redis.call("SREM", KEYS[2], ARGV[1]) end
      return 3
    end
  end
  worker = ARGV[3]
end
if state == ARGV[4] and attempt == a and worker == ARGV[3] then return 2 end
if state ~= "running" or attempt ~= a or worker ~= ARGV[3] then return 0 end
recordUsageFrom(r, KEYS[6], ARGV[1], ARGV[2], ARGV[5], ARGV[4], false)
redis.call("HSET", KEYS[1], "state", ARGV[4], "finished", ARGV[5], "exit_code", ARGV[6], "error", ARGV[7])
if r[13] then redis.call("HDEL", KEYS[1], "preempt", "preempt_reason", "preempt_spot") end
redis.call("SREM", KEYS[2], ARGV[1])
if gang then gangUnlist(KEYS[1], ARGV[1], a, ARGV[9]) end
redis.call("ZREM", KEYS[4], ARGV[1])
if ARGV[11] ~= "" then departed(KEYS[4], ARGV[1], ARGV[11]) end
if tonumber(ARGV[8]) > 0 then
  redis.call("PEXPIRE", KEYS[1], ARGV[8])
  redis.call("PEXPIRE", KEYS[3], ARGV[8])
  if r[15] then redis.call("PEXPIRE", KEYS[5], ARGV[8]) end
end
return 1
`)

// requeueScript ends a running attempt and queues the next one. Any preempt
// request belonged to the attempt that ends here, so it is cleared; when the
// caller names no queue, the queue it asked for is where the next attempt
// goes (a drain racing a reclaim still sends the job where the plan wanted).
// KEYS: job, outbox, workerJobs, active, log, metrics, usage. ARGV: id, attempt,
// worker ("" = any), queue ("" = the preempt target, else the same), now,
// notBefore, counter ("retries"|"requeues"|"preemptions"), reason ("" for a
// preemption = built from the request's reason), spot, retentionMs,
// workerKeyPrefix (for a gang's members' running sets).
// Returns {newAttempt, queue, reason}: newAttempt is 0 when the attempt had
// moved on, or -1 when a cancel was pending, in which case the job is
// cancelled instead.
// The move is remembered in the record ("ended": attempt|worker|counter,
// "ended_reply": the reply), so that a retry whose first try committed but
// whose reply was lost gets the same reply, not "moved on", and the caller
// still announces the move; only a caller naming its worker is answered
// so, since "any worker" names nobody's move. A later move overwrites it;
// by then the retry is long over. A preemption's reason goes to last_move, not error: it
// is no failure, and the last real error stays readable.
// The usage record of the attempt counts the work since its last checkpoint
// as lost, except for a retry: a failed attempt's work is not thrown away by
// Ballast, and lost work measures what preemption costs.
var requeueScript = redis.NewScript(usageLua + gangLua + heldAdmittedLua + `
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "worker", "cancel", "preempt", "preempt_reason", "queue",
  "ended", "ended_reply", "preempt_spot")
local this = ARGV[2] .. "|" .. ARGV[3] .. "|" .. ARGV[7]
if ARGV[3] ~= "" and st[8] == this and st[9] then return cjson.decode(st[9]) end
if st[1] ~= "running" or tonumber(st[2]) ~= tonumber(ARGV[2]) then return {0, "", ""} end
-- A gang's attempt is any member's to end, and it leaves every member's
-- running set (see gang.go).
local gang = gangSize(KEYS[1]) > 1
if ARGV[3] ~= "" and st[3] ~= ARGV[3] and not (gang and gangMember(KEYS[1], ARGV[3], st[2])) then return {0, "", ""} end
if gang then gangUnlist(KEYS[1], ARGV[1], st[2], ARGV[11]) end
local outcome = "preempted"
if ARGV[7] == "retries" then outcome = "retried" elseif ARGV[7] == "requeues" then outcome = "requeued" end
if st[4] == "1" then outcome = "cancelled" end
recordUsage(KEYS[1], KEYS[7], ARGV[1], ARGV[2], ARGV[5], outcome, outcome == "preempted" or outcome == "requeued")
if st[3] and st[3] ~= "" then redis.call("SREM", KEYS[3], ARGV[1]) end
local reason = ARGV[8]
if ARGV[7] == "preemptions" and reason == "" then
  reason = "preempted"
  if st[6] and st[6] ~= "" then reason = "preempted: " .. st[6] end
end
redis.call("HDEL", KEYS[1], "preempt", "preempt_reason", "preempt_spot")
if st[4] == "1" then
  redis.call("HSET", KEYS[1], "state", "cancelled", "finished", ARGV[5], "worker", "", "error", "cancelled while " .. reason,
    "ended", this, "ended_reply", cjson.encode({-1, "", reason}))
  redis.call("ZREM", KEYS[4], ARGV[1])
  if tonumber(ARGV[10]) > 0 then
    redis.call("PEXPIRE", KEYS[1], ARGV[10])
    redis.call("PEXPIRE", KEYS[5], ARGV[10])
    redis.call("PEXPIRE", KEYS[6], ARGV[10])
  end
  return {-1, "", reason}
end
local q = ARGV[4]
if q == "" and st[5] then q = st[5] end
if q == "" then q = st[7] end
q = backToHeld(KEYS[1], q)
local nxt = tonumber(st[2]) + 1
redis.call("HSET", KEYS[1], "state", "queued", "attempt", nxt, "worker", "", "queued", ARGV[5],
  "not_before", ARGV[6], "queue", q, "ended", this, "ended_reply", cjson.encode({nxt, q, reason}), "ob", "1")
if ARGV[7] == "preemptions" then
  redis.call("HSET", KEYS[1], "last_move", reason)
else
  redis.call("HSET", KEYS[1], "error", reason)
end
redis.call("HINCRBY", KEYS[1], ARGV[7], 1)
-- Work sent back goes ahead of the jobs never taken (readmit.go); a
-- retry after a failure waits its back-off and queues as new work.
if ARGV[7] == "retries" then
  redis.call("HDEL", KEYS[1], "readmit")
else
  redis.call("HSET", KEYS[1], "readmit", "1")
end
-- A spot notice on another member's worker than the one requeueing (a
-- gang's) is recorded with the request.
if ARGV[9] == "1" or (ARGV[7] == "preemptions" and st[10] == "1") then
  redis.call("HINCRBY", KEYS[1], "spot_preemptions", 1)
end
redis.call("ZADD", KEYS[2], ARGV[5], ARGV[1])
return {nxt, q, reason}
`)

// moveScript moves a queued job to another queue as a new attempt, so that
// the delivery already in the old queue is stale and dropped by its claim.
// KEYS: job, outbox. ARGV: id, attempt, queue, now, reason, readmit ("1":
// the attempt was taken once, see readmit.go; absent otherwise), admit
// ("1": rule 9 admits a held job to core, see held_admitted.go). A
// readmitted core job that rule 9 admitted goes back to held instead; any
// other move that does not readmit ends that admission.
// Returns {} when the job is not queued at that attempt, else {fromQueue,
// record as a flat HGETALL list}. "queued" (when the job began waiting) is
// kept: a move is not a new wait, and wait-time rules must not be reset by
// the controller shuffling a job between queues.
var moveScript = redis.NewScript(heldAdmittedLua + `
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "queue")
if st[1] ~= "queued" or tonumber(st[2]) ~= tonumber(ARGV[2]) then return {} end
local q = ARGV[3]
if ARGV[7] == "1" then
  redis.call("HSET", KEYS[1], "` + heldAdmittedField + `", "1")
elseif ARGV[6] == "1" then
  q = backToHeld(KEYS[1], q)
else
  redis.call("HDEL", KEYS[1], "` + heldAdmittedField + `")
end
redis.call("HSET", KEYS[1], "attempt", tonumber(st[2]) + 1, "queue", q, "last_move", ARGV[5], "ob", "1")
if ARGV[6] == "1" then redis.call("HSET", KEYS[1], "readmit", "1") end
redis.call("ZADD", KEYS[2], ARGV[4], ARGV[1])
return {st[3], redis.call("HGETALL", KEYS[1])}
`)

// requestPreemptScript asks the worker of a running attempt to checkpoint it
// and send the next attempt to another queue. A pending cancel wins, so the
// request is refused then. KEYS: job. ARGV: attempt, queue, reason, spot
// ("1": a spot notice, which the requeue counts against the spot budget),
// keep ("1": a request already pending stands as it is, with its queue and
// reason; this one only makes sure there is one).
// Returns 1 when recorded (or one stands), 0 when the attempt is not
// running (or moved on) or is being cancelled.
var requestPreemptScript = redis.NewScript(`
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "cancel", "preempt")
if st[1] ~= "running" or tonumber(st[2]) ~= tonumber(ARGV[1]) or st[3] == "1" then return 0 end
if ARGV[5] == "1" and st[4] and st[4] ~= "" then return 1 end
redis.call("HSET", KEYS[1], "preempt", ARGV[2], "preempt_reason", ARGV[3])
if ARGV[4] == "1" then redis.call("HSET", KEYS[1], "preempt_spot", "1") end
return 1
`)

// checkpointScript records a checkpoint of the running attempt.
// KEYS: job. ARGV: attempt, worker, checkpoint, now.
var checkpointScript = redis.NewScript(`
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "worker")
if st[1] ~= "running" or tonumber(st[2]) ~= tonumber(ARGV[1]) or st[3] ~= ARGV[2] then return 0 end
redis.call("HSET", KEYS[1], "checkpoint", ARGV[3], "checkpoint_at", ARGV[4])
return 1
`)

// cancelScript cancels a queued job at once, or asks the worker of a running
// one to stop it; a queued job's departure is noted (see departLua).
// KEYS: job, outbox, active, metrics, log. ARGV: id, now, retentionMs.
// A queued job may hold a metric series from an earlier attempt (requeued
// after reporting): it expires with the record, as in finishScript.
// Returns {"cancelled", attempt, queue} | {"requested", worker, attempt} |
// {"finished", state, attempt, finished} | {"gone"}. The attempt and the
// time of a finished job let a retried cancel, whose first try committed,
// announce the cancel it made.
var cancelScript = redis.NewScript(departLua + `
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "queue", "worker", "finished")
if not st[1] then return {"gone"} end
if st[1] == "queued" then
  redis.call("HSET", KEYS[1], "state", "cancelled", "finished", ARGV[2], "error", "cancelled before it started")
  redis.call("ZREM", KEYS[2], ARGV[1])
  redis.call("ZREM", KEYS[3], ARGV[1])
  -- No attempt ends here, so no usage entry says the job left.
  departed(KEYS[3], ARGV[1], ARGV[2])
  if tonumber(ARGV[3]) > 0 then
    redis.call("PEXPIRE", KEYS[1], ARGV[3])
    redis.call("PEXPIRE", KEYS[4], ARGV[3])
    redis.call("PEXPIRE", KEYS[5], ARGV[3])
  end
  return {"cancelled", st[2], st[3]}
end
if st[1] == "running" then
  redis.call("HSET", KEYS[1], "cancel", "1")
  return {"requested", st[4] or "", st[2]}
end
return {"finished", st[1], st[2] or "0", st[5] or "0"}
`)

// heartbeatScript refreshes a worker and reports which of its jobs it must
// stop and which control intents are recorded for it. The first beat of a
// worker process also opens its life record (see usage.go), which the cost
// ledger bills: from its launch when the controller recorded one (the
// provider bills the boot too), else from the process's start. Every beat
// keeps the worker's pool where claimScript reads it, and the life where
// deregistration and recovery close it.
//
// Incarnations: each process start has a random token, kept under the ID's
// incarnation key. A registering beat (ARGV[8] = "1") of a new incarnation
// takes the ID over: the previous incarnation's life ends at its last beat,
// its jobs are requeued at once (requeueWorkerJobs), its intents are dropped
// with its registry entry, and a tombstone left by recovery no longer
// applies. Any other beat of an incarnation that is not the current one is
// fenced, so a paused old process stops its jobs unrecorded.
//
// KEYS: workers, worker, tombstone, lives, launches, incarnation,
// workerJobs, outbox, active, usage, livesEnd, then one job key per running
// job. ARGV: workerID, now, info (JSON), slots, start, pool, incarnation,
// register, spot ("1" for a spot pool), jobKeyPrefix, retentionMs,
// incarnationTTLms, workerKeyPrefix, then "id:attempt" per running job
// (ARGV[i+2] for KEYS[i]).
// Every beat but a registration also names the attempts on record as
// running here, claimed more than orphanGrace ago, that the beating process
// does not run (see unrecorded.go); it changes nothing for them.
// Returns "fenced", else {drain, spotDeadlineMs, taken, jobs, unrecorded}:
// taken is a flat {id, newAttempt, queue, ...} of jobs requeued from the
// previous incarnation, jobs a flat {id, "cancel"|"preempt"|"lost", ...}
// (a cancel outranks a preemption: the user wants the job gone, not
// moved), unrecorded a flat {id, attempt, gangSize, ...}.
var heartbeatScript = redis.NewScript(usageLua + gangLua + requeueWorkerJobsLua + unrecordedLua + `
local cur = redis.call("GET", KEYS[6])
local taken = {}
if ARGV[8] == "1" then
  if cur ~= ARGV[7] then
    local beat = redis.call("HGET", KEYS[2], "beat") or ARGV[2]
    local oldLife = redis.call("HGET", KEYS[2], "life")
    if oldLife then redis.call("HSETNX", KEYS[11], oldLife, beat) end
    redis.call("DEL", KEYS[2])
    taken = requeueWorkerJobs(ARGV[1], KEYS[7], ARGV[10], ARGV[13], KEYS[8], KEYS[9], KEYS[10], ARGV[2], beat, ARGV[11], "restarted")
  end
  redis.call("DEL", KEYS[3])
else
  if redis.call("EXISTS", KEYS[3]) == 1 then return "fenced" end
  if cur and cur ~= ARGV[7] then return "fenced" end
end
redis.call("SET", KEYS[6], ARGV[7], "PX", ARGV[12])
redis.call("ZADD", KEYS[1], ARGV[2], ARGV[1])
local life = redis.call("HGET", KEYS[2], "life")
if not life then
  local start = ARGV[5]
  local launch = redis.call("HGET", KEYS[5], ARGV[1])
  if launch then
    local launched = string.match(launch, "^(%d+)|")
    if launched and tonumber(launched) < tonumber(start) then start = launched end
    redis.call("HDEL", KEYS[5], ARGV[1])
  end
  life = start .. "|" .. ARGV[6] .. "|" .. ARGV[4] .. "|" .. ARGV[1]
  redis.call("ZADD", KEYS[4], "NX", start, life)
end
redis.call("HSET", KEYS[2], "info", ARGV[3], "beat", ARGV[2], "pool", ARGV[6], "life", life, "spot_pool", ARGV[9])
local out = {}
for i = 12, #KEYS do
  local ref = ARGV[i + 2]
  local sep = string.find(ref, ":", 1, true)
  local id = string.sub(ref, 1, sep - 1)
  local attempt = tonumber(string.sub(ref, sep + 1))
  local st = redis.call("HMGET", KEYS[i], "state", "attempt", "worker", "cancel", "preempt")
  if st[1] ~= "running" or tonumber(st[2]) ~= attempt or (st[3] ~= ARGV[1] and not gangMember(KEYS[i], ARGV[1], attempt)) then
    table.insert(out, id); table.insert(out, "lost")
  elseif st[4] == "1" then
    table.insert(out, id); table.insert(out, "cancel")
  elseif st[5] and st[5] ~= "" then
    table.insert(out, id); table.insert(out, "preempt")
  end
end
local unrecorded = {}
if ARGV[8] ~= "1" then
  -- Every job of the running set is reported but for a claim in flight:
  -- only the others are read.
  local reported = {}
  for i = 14, #ARGV do
    reported[string.sub(ARGV[i], 1, string.find(ARGV[i], ":", 1, true) - 1)] = true
  end
  local before = tonumber(ARGV[2]) - orphanGraceMs
  for _, id in ipairs(redis.call("SMEMBERS", KEYS[7])) do
    if not reported[id] then
      local a, gang = unrecordedAttempt(ARGV[10] .. id, ARGV[1], before)
      if a then table.insert(unrecorded, id); table.insert(unrecorded, a); table.insert(unrecorded, gang) end
    end
  end
end
local intents = redis.call("HMGET", KEYS[2], "` + IntentDrainField + `", "` + IntentSpotField + `")
return {intents[1] or "", intents[2] or "", taken, out, unrecorded}
`)

// deregisterScript removes a worker that stops cleanly and closes its life
// record. KEYS: workers, worker, livesEnd. ARGV: workerID, now.
var deregisterScript = redis.NewScript(`
local life = redis.call("HGET", KEYS[2], "life")
if life then redis.call("HSETNX", KEYS[3], life, ARGV[2]) end
redis.call("ZREM", KEYS[1], ARGV[1])
redis.call("DEL", KEYS[2])
return 1
`)

// recoverWorkerScript declares a silent worker dead and requeues its jobs as
// new attempts. A job the controller was preempting goes to the queue it
// asked for (it was leaving its slot anyway); the request itself dies with
// the attempt it was made for. The worker's life, and each of its attempts,
// ends at its last heartbeat: that is when it was last known to run, and
// the silence after it is the controller's detection delay, not use.
// KEYS: workers, worker, workerJobs, tombstone, outbox, active, usage, livesEnd.
// ARGV: workerID, now, cutoff (ms: a heartbeat after it means alive),
// jobKeyPrefix, tombstoneTTLms, retentionMs (for jobs that end cancelled;
// their log and metrics keys are the record's key plus logSuffix and
// metricsSuffix), workerKeyPrefix.
// Returns a flat list {id, newAttempt, queue, ...}.
var recoverWorkerScript = redis.NewScript(usageLua + gangLua + requeueWorkerJobsLua + `
local beat = redis.call("ZSCORE", KEYS[1], ARGV[1])
if beat and tonumber(beat) > tonumber(ARGV[3]) then return {} end
local ended = ARGV[2]
-- A score may come back in exponent form; ends are stored as integer ms.
if beat then ended = string.format("%d", tonumber(beat)) end
local life = redis.call("HGET", KEYS[2], "life")
if life then redis.call("HSETNX", KEYS[8], life, ended) end
redis.call("ZREM", KEYS[1], ARGV[1])
redis.call("DEL", KEYS[2])
redis.call("SET", KEYS[4], ARGV[2], "PX", ARGV[5])
local out = requeueWorkerJobs(ARGV[1], KEYS[3], ARGV[4], ARGV[7], KEYS[5], KEYS[6], KEYS[7], ARGV[2], ended, ARGV[6], "lost")
redis.call("DEL", KEYS[3])
return out
`)
