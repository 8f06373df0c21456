package queues

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// The kernel's part of the accounting; queues/usage reads it, keeps the
// launches and trims it all (see its doc.go). Usage entries and worker
// lives are written here, by the scripts that change a job or a worker,
// because they must change in the same step:
//
//   - usage, a sorted set of one JSON entry per ended attempt, scored by the
//     attempt's end. The scripts that end an attempt (finish, requeue,
//     recovery of a dead worker) add the entry in the same step, so an
//     attempt is recorded exactly once, when it ends, and never for a
//     delivery the fencing dropped.
//   - lives, a sorted set of worker lives scored by their start, with
//     livesEnd holding each ended life's end (members: see ParseLife). A
//     worker's first heartbeat opens its life, taking over the launch the
//     controller recorded for it; a clean stop or its recovery as dead
//     closes it.

// usageLua defines recordUsage(jobKey, usageKey, id, attempt, endMs,
// outcome, lost) for the scripts that end a running attempt. Call it before
// the record changes state: it reads the attempt's start, wait, pool and
// last checkpoint from the record. The wait starts when the attempt could
// first start: a retry's back-off is not a wait for capacity. With lost set, the work since the later
// of the attempt's start and its last checkpoint is counted as thrown away.
const usageLua = `
local usageFields = {"started", "queued", "checkpoint_at", "pool", "worker", "team", "template", "class", "not_before", "tslots"}
local function usageStr(s)
  if not s then return '""' end
  if string.find(s, '[%c"\\\128-\255]') then return cjson.encode(s) end
  return '"' .. s .. '"'
end
local function recordUsageFrom(r, ukey, id, attempt, endms, outcome, lost)
  local start = tonumber(r[1])
  if not start then return end
  local queued = tonumber(r[2]) or start
  local nb = tonumber(r[9])
  if nb and nb > queued and nb <= start then queued = nb end
  local e = tonumber(endms)
  if e < start then e = start end
  local l = 0
  if lost then
    local from = start
    local cp = tonumber(r[3])
    if cp and cp > from then from = cp end
    if e > from then l = e - from end
  end
  -- Written by hand, not by cjson.encode of a table: that costs Redis
  -- twice as much, on every attempt's end. Numbers print as cjson prints
  -- them (both use %.14g), and strings that need escaping go to cjson.
  redis.call("ZADD", ukey, e, '{"job":' .. usageStr(id) .. ',"attempt":' .. (tonumber(attempt) or 0) ..
    ',"queued":' .. queued .. ',"start":' .. start .. ',"end":' .. e .. ',"lost":' .. l ..
    ',"pool":' .. usageStr(r[4]) .. ',"worker":' .. usageStr(r[5]) .. ',"team":' .. usageStr(r[6]) ..
    ',"template":' .. usageStr(r[7]) .. ',"class":' .. usageStr(r[8]) .. ',"outcome":' .. usageStr(outcome) ..
    ',"slots":' .. (tonumber(r[10]) or 1) .. '}')
end
local function recordUsage(key, ukey, id, attempt, endms, outcome, lost)
  recordUsageFrom(redis.call("HMGET", key, unpack(usageFields)), ukey, id, attempt, endms, outcome, lost)
end
`

// usageSlots is what a job record's "tslots" field holds for the scripts
// that write usage entries: the job's total slots, or, for a job with a
// gpu_share, its share in thousandths as a negative number, so the
// scripts copy one number either way (queues/usage reads it back).
func usageSlots(spec jobs.Spec) int {
	if m := spec.ShareMilli(); m > 0 {
		return -m
	}
	return spec.TotalSlots()
}

// msUTC is a time the scripts wrote in Unix ms; 0 is none.
func msUTC(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
