package queues

// A gang (jobs.Size.Gang: Replicas n > 1) is one job of n members started
// together; its protocol (member claims, the start barrier, giving up) is
// queues/gangs'. The kernel keeps what must change a job record in the
// same script as an end, requeue, beat or recovery: fencing a running gang
// on membership. The record's gang fields all name the attempt they were
// written for, as "placed" does, so a new attempt needs no clean-up of the
// last one's:
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
// member: each records its own end (d<i>, FinishMember) and the last ends
// the job, with one usage record for the gang. Only member 0 records
// checkpoints.

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
