package queues

import (
	"strconv"
	"time"
)

// departedKeep is how long a departure stays in Namespace.Departed: far
// longer than any reader of changes falls behind (a reader more behind
// reads the active index whole at its rebuild anyway).
const departedKeep = 10 * time.Minute

// departLua defines departed(activeKey, id, nowMs) for the scripts that
// remove a job from the active index with no attempt ending then: it notes
// the departure where ActiveChanges reads it, and trims the departures
// older than departedKeep.
var departLua = `
local function departed(active, id, now)
  local key = active .. "` + departedSuffix + `"
  redis.call("ZADD", key, now, id)
  redis.call("ZREMRANGEBYSCORE", key, "-inf", "(" .. (tonumber(now) - ` + strconv.FormatInt(departedKeep.Milliseconds(), 10) + `))
end
`

// requeueWorkerJobsLua ends every attempt a worker identity holds and queues
// the next one, resuming from its last checkpoint; a job being cancelled ends
// cancelled instead. Two scripts share it: recovery of a silent worker, and
// the registration of a new incarnation under an ID whose previous one still
// holds jobs (the old process is dead or paused, and its jobs must not wait
// for it to time out). Prepend usageLua too.
//
// Every attempt queued here is readmitted (see readmit.go): it goes
// ahead of the jobs never taken; a core job rule 9 admitted goes back to
// held (see held_admitted.go).
//
// requeueWorkerJobs(worker, workerJobsKey, jobKeyPrefix, workerKeyPrefix,
// outboxKey, activeKey, usageKey, nowMs, endedMs, retentionMs, why) returns a flat list
// {id, newAttempt, queue, ...} and empties workerJobsKey. why ("lost",
// "restarted") goes into each record's error. requeueJobs does the same for
// the given job IDs only, removing them from workerJobsKey. Prepend
// gangLua and keySuffixLua as well. The prefixes come from keys.go
// (JobPrefix, WorkerPrefix) and carry the namespace's hash tag, so every key
// derived from them is in the slot of the script's declared keys.
var requeueWorkerJobsLua = departLua + heldAdmittedLua + `
local function requeueJobs(ids, worker, wjobs, prefix, wprefix, outbox, active, ukey, now, ended, retention, why)
  local out = {}
  for _, id in ipairs(ids) do
    redis.call("SREM", wjobs, id)
    local k = prefix .. id
    local st = redis.call("HMGET", k, "state", "attempt", "worker", "queue", "cancel", "preempt")
    -- A gang is any member's worker's: it requeues whole, and leaves
    -- every member's running set (see gang.go). One still assembling
    -- moves on unplaced, so its other members stop waiting for this one.
    local gang = gangSize(k) > 1
    local member = gang and gangMember(k, worker, st[2])
    if gang and member and st[1] == "queued" then
      local nxt = tonumber(st[2]) + 1
      redis.call("HSET", k, "attempt", nxt, "last_move", "worker " .. worker .. " " .. why, "ob", "1", "readmit", "1")
      redis.call("ZADD", outbox, now, id)
    end
    if st[1] == "running" and (st[3] == worker or member) then
      if gang then gangUnlist(k, id, st[2], wprefix) end
      local outcome = "lost"
      if st[5] == "1" then outcome = "cancelled" end
      recordUsage(k, ukey, id, st[2], ended, outcome, st[5] ~= "1")
      if st[5] == "1" then
        redis.call("HSET", k, "state", "cancelled", "finished", now, "worker", "", "error", "cancelled; its worker " .. worker .. " was " .. why)
        redis.call("ZREM", active, id)
        -- Its usage entry is stamped at the worker's last beat, which a
        -- reader of changes may have passed long ago.
        departed(active, id, now)
        redis.call("HDEL", k, "preempt", "preempt_reason", "preempt_spot")
        if tonumber(retention) > 0 then
          redis.call("PEXPIRE", k, retention)
          redis.call("PEXPIRE", k .. logSuffix, retention)
          redis.call("PEXPIRE", k .. metricsSuffix, retention)
        end
      else
        local nxt = tonumber(st[2]) + 1
        -- A job the controller was preempting goes where it asked.
        if st[6] and st[6] ~= "" then st[4] = st[6] end
        st[4] = backToHeld(k, st[4])
        redis.call("HDEL", k, "preempt", "preempt_reason", "preempt_spot")
        redis.call("HSET", k, "state", "queued", "attempt", nxt, "worker", "", "queued", now,
          "not_before", now, "queue", st[4], "error", "worker " .. worker .. " " .. why, "ob", "1", "readmit", "1")
        redis.call("HINCRBY", k, "requeues", 1)
        redis.call("ZADD", outbox, now, id)
        table.insert(out, id); table.insert(out, nxt); table.insert(out, st[4])
      end
    end
  end
  return out
end

local function requeueWorkerJobs(worker, wjobs, prefix, wprefix, outbox, active, ukey, now, ended, retention, why)
  local out = requeueJobs(redis.call("SMEMBERS", wjobs), worker, wjobs, prefix, wprefix, outbox, active, ukey, now, ended, retention, why)
  redis.call("DEL", wjobs)
  return out
end
`
