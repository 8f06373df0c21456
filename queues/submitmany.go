package queues

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A batch records its jobs a group at a time, one script per group. What
// a job costs Redis is mostly the script calls it makes, and a group
// shares those that touch keys every job touches: one ZMSCORE finds the
// calls run before (a resend after a lost reply), one MGET reads every
// idempotency key, one ZADD each adds the group to the index and the
// active set. A job's own keys (its record, its task, its queue's pending
// list, its idempotency key) are still written by the job's own calls, in
// the order submitScript writes them, so a job is recorded exactly as a
// lone submission records it: atomically, with its task or its outbox
// entry. The group is atomic too, which is more than a batch promises.

// submitGroup bounds one script. Redis runs nothing else while a script
// runs: a hundred jobs keep that to a few milliseconds.
const submitGroup = 100

// submitArgs is how many arguments each job of submitManyScript takes:
// submitScript's twelve, then the inline task's three ("" for a job whose
// task the caller enqueues).
const submitArgs = 15

// submitManyScript is submitScript for a group of jobs.
// KEYS: index, active, outbox, then per job: job, idem, task, pending
// (the job's key again for the last two of a job without an inline task).
// ARGV: per job, submitScript's ARGV with taskMsg, taskID and
// pendingSinceNs always present ("" without an inline task).
// Returns the flat list of every job's reply, in order: "new"|"dup"|
// "conflict", id.
var submitManyScript = redis.NewScript(`
local per = ` + fmt.Sprint(submitArgs) + `
local n = (#KEYS - 3) / 4
local ids = {}
for i = 1, n do ids[i] = ARGV[(i - 1) * per + 1] end
-- The index holds an ID only if this very call ran before (IDs are new
-- for every call): such a job is answered as new again.
local scores = redis.call("ZMSCORE", KEYS[1], unpack(ids))
local idemKeys, idemAt = {}, {}
for i = 1, n do
  if ARGV[(i - 1) * per + 6] == "1" then
    table.insert(idemKeys, KEYS[3 + (i - 1) * 4 + 2])
    idemAt[i] = #idemKeys
  end
end
local idemVals = {}
if #idemKeys > 0 then idemVals = redis.call("MGET", unpack(idemKeys)) end
-- Keys set by this script: a later job of the group with the same key
-- finds the earlier one, as its own script would have.
local set = {}
local added = {}
local out = {}
for i = 1, n do
  local a = (i - 1) * per
  local k = 3 + (i - 1) * 4
  local id = ARGV[a + 1]
  local verdict, vid
  if scores[i] then verdict, vid = "new", id end
  if not verdict and ARGV[a + 6] == "1" then
    local ex = set[KEYS[k + 2]] or idemVals[idemAt[i]]
    if ex then
      local sep = string.find(ex, "|", 1, true)
      local eid = string.sub(ex, 1, sep - 1)
      if eid == id then verdict, vid = "new", id
      elseif string.sub(ex, sep + 1) ~= ARGV[a + 7] then verdict, vid = "conflict", eid
      else verdict, vid = "dup", eid end
    end
  end
  if not verdict then
    if ARGV[a + 6] == "1" then
      local v = id .. "|" .. ARGV[a + 7]
      redis.call("SET", KEYS[k + 2], v, "PX", ARGV[a + 5])
      set[KEYS[k + 2]] = v
    end
    local inline = ARGV[a + 13] ~= ""
    -- The fields go to HSET as they are: a table of them, unpacked,
    -- costs Redis as much as a third of the write.
    redis.call("HSET", KEYS[k + 1], "spec", ARGV[a + 2], "state", "queued", "attempt", 1, "queue", ARGV[a + 3],
      "created", ARGV[a + 4], "queued", ARGV[a + 4], "not_before", ARGV[a + 8],
      "team", ARGV[a + 9], "template", ARGV[a + 10], "class", ARGV[a + 11], "tslots", ARGV[a + 12])
    if inline then
      redis.call("HSET", KEYS[k + 3], "msg", ARGV[a + 13], "state", "pending", "pending_since", ARGV[a + 15])
      redis.call("LPUSH", KEYS[k + 4], ARGV[a + 14])
    else
      redis.call("HSET", KEYS[k + 1], "ob", "1")
      redis.call("ZADD", KEYS[3], ARGV[a + 4], id)
    end
    table.insert(added, ARGV[a + 4]); table.insert(added, id)
    verdict, vid = "new", id
  end
  table.insert(out, verdict); table.insert(out, vid)
end
if #added > 0 then
  redis.call("ZADD", KEYS[1], unpack(added))
  redis.call("ZADD", KEYS[2], unpack(added))
end
return out
`)

// runSubmitGroups records the calls picked by todo with submitManyScript,
// a group of up to submitGroup jobs per script, every group of them in one
// pipeline; the replies are indexed as calls. A Redis that does not hold
// the script answers NOSCRIPT without running it, so those groups are sent
// once more after the script is loaded, and nothing runs twice.
func (s *Store) runSubmitGroups(ctx context.Context, calls []submitCall, todo []int) []submitReply {
	out := make([]submitReply, len(calls))
	var groups [][]int
	for lo := 0; lo < len(todo); lo += submitGroup {
		groups = append(groups, todo[lo:min(lo+submitGroup, len(todo))])
	}
	rdb := s.rdb
	if s.co.wait.replicas > 0 {
		var err error
		if rdb, err = s.co.wait.client(ctx, s.rdb, s.ns.JobIndex()); err != nil {
			for _, i := range todo {
				out[i].err = err
			}
			return out
		}
	}
	for round := 0; round < 2 && len(groups) > 0; round++ {
		cmds := make([]*redis.Cmd, len(groups))
		var wait *redis.IntCmd
		_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for g, group := range groups {
				keys, args := groupCall(s, calls, group)
				cmds[g] = submitManyScript.EvalSha(ctx, p, keys, args...)
			}
			// The pipeline is one connection: a WAIT at its end counts the
			// replicas of every group in it (see replicated.go).
			wait = s.co.wait.add(ctx, p)
			return nil
		})
		unconfirmed := s.co.wait.check(wait)
		var again [][]int
		for g, group := range groups {
			res, err := cmds[g].StringSlice()
			if err != nil && round == 0 && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				again = append(again, group)
				continue
			}
			if err == nil && unconfirmed != nil {
				err = unconfirmed
			}
			err = s.co.wait.moved(ctx, s.rdb, err)
			for k, i := range group {
				switch {
				case err != nil:
					out[i].err = err
				case len(res) != 2*len(group):
					out[i].err = fmt.Errorf("queues.SubmitBatch: %d values in reply to a group of %d jobs", len(res), len(group))
				default:
					out[i].res = res[2*k : 2*k+2]
				}
			}
		}
		if len(again) > 0 {
			if err := submitManyScript.Load(ctx, rdb).Err(); err != nil {
				// Those jobs were not run: their results say so.
				for _, group := range again {
					for _, i := range group {
						out[i].err = err
					}
				}
				return out
			}
		}
		groups = again
	}
	for _, i := range todo {
		if out[i].res == nil && out[i].err == nil {
			out[i].err = fmt.Errorf("no reply to the submit of job %s", calls[i].job.ID)
		}
	}
	return out
}

// groupCall lays out the keys and arguments of submitManyScript for the
// calls of group.
func groupCall(s *Store, calls []submitCall, group []int) ([]string, []any) {
	keys := make([]string, 0, 3+4*len(group))
	keys = append(keys, s.ns.JobIndex(), s.ns.ActiveJobs(), s.ns.Outbox())
	args := make([]any, 0, submitArgs*len(group))
	for _, i := range group {
		c := calls[i]
		job, idem := s.ns.Job(c.job.ID), s.ns.Idempotency(c.job.Spec.IdempotencyKey)
		if c.inline {
			// c.args ends with the task's three arguments.
			keys = append(keys, job, idem, c.task.key, c.task.pending)
			args = append(args, c.args...)
		} else {
			keys = append(keys, job, idem, job, job)
			args = append(args, c.args...)
			args = append(args, "", "", "")
		}
	}
	return keys, args
}
