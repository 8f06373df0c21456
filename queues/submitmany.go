package queues

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A batch records its jobs a group at a time, one script per group. What
// a job costs Redis is mostly the script calls it makes, and a group
// shares those that touch keys every job touches: one ZMSCORE finds the
// calls run before (a resend after a lost reply), one MGET reads every
// idempotency key, one ZADD each adds the group to the index and the
// active set, one LPUSH each queue's pending list. A job's own keys (its
// record, its task, its idempotency key) are still written by the job's
// own calls, as submitScript writes them, so a job is recorded exactly as
// a lone submission records it: atomically, with its task or its outbox
// entry. The group is atomic too, which is more than a batch promises.

// submitGroup bounds one script. Redis runs nothing else while a script
// runs: a hundred jobs keep that to a few milliseconds.
const submitGroup = 100

// A group's script takes what its jobs share once. Every job of a batch
// is prepared at one time, so the time stamps (created, queued,
// not_before, the index scores, the tasks' pending_since) and the
// idempotency TTL are the group's. A batch is mostly jobs of one queue,
// team, template, class and size, so those five go in a small table that
// each job names by its row, and each distinct pending list is a key of
// the group. A job then takes six arguments and three keys where it took
// fifteen and four: Redis parses, copies and hands to Lua each one, and
// that was a good part of what a batch job cost it.

// groupHead is how many arguments of submitManyScript precede its rows.
const groupHead = 5

// groupRow is how many arguments one row of the table takes: queue, team,
// template, class, total slots, and the row's pending list (its index
// among the group's pending keys, 0 for none).
const groupRow = 6

// submitArgs is how many arguments each job of submitManyScript takes:
// id, spec, idempotency value (id|fingerprint, "" without a key), row,
// task message and task ID ("" for a job whose task the caller enqueues).
const submitArgs = 6

// submitManyScript is submitScript for a group of jobs.
// KEYS: index, active, outbox, the group's pending lists, then per job:
// job, idem, task (the job's key again for a job without an inline task).
// ARGV: now (ms), idemTTLms, pendingSinceNs, pending lists, rows, then the
// rows (groupRow each), then per job submitArgs (see above).
// Returns, flat, a triple for each job whose reply is not "new" (which
// names the job's own ID), in order: its index in the group (from 1),
// "dup"|"conflict", the ID it names. Nearly every reply is "new", and
// reading a string pair per job cost the caller more than the rest of the
// reply.
var submitManyScript = redis.NewScript(`
local per, row = ` + fmt.Sprint(submitArgs) + `, ` + fmt.Sprint(groupRow) + `
local now, ttl, since = ARGV[1], ARGV[2], ARGV[3]
local np, nr = tonumber(ARGV[4]), tonumber(ARGV[5])
local rows = {}
for r = 1, nr do
  local b = ` + fmt.Sprint(groupHead) + ` + (r - 1) * row
  local p = tonumber(ARGV[b + 6])
  rows[r] = {ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5], p > 0 and KEYS[3 + p] or false}
end
local a0 = ` + fmt.Sprint(groupHead) + ` + nr * row
local k0 = 3 + np
local n = (#KEYS - k0) / 3
local ids = {}
for i = 1, n do ids[i] = ARGV[a0 + (i - 1) * per + 1] end
-- The index holds an ID only if this very call ran before (IDs are new
-- for every call): such a job is answered as new again.
local scores = redis.call("ZMSCORE", KEYS[1], unpack(ids))
local idemKeys, idemAt = {}, {}
for i = 1, n do
  if ARGV[a0 + (i - 1) * per + 3] ~= "" then
    idemKeys[#idemKeys + 1] = KEYS[k0 + (i - 1) * 3 + 2]
    idemAt[i] = #idemKeys
  end
end
local idemVals = {}
if #idemKeys > 0 then idemVals = redis.call("MGET", unpack(idemKeys)) end
-- Keys set by this script: a later job of the group with the same key
-- finds the earlier one, as its own script would have.
local set = {}
local added, na = {}, 0
local pushes, pushOrder = {}, {}
local out = {}
for i = 1, n do
  local a = a0 + (i - 1) * per
  local k = k0 + (i - 1) * 3
  local id, iv = ARGV[a + 1], ARGV[a + 3]
  local verdict, vid
  if scores[i] then verdict, vid = "new", id end
  if not verdict and iv ~= "" then
    local ex = set[KEYS[k + 2]] or idemVals[idemAt[i]]
    if ex then
      local sep = string.find(ex, "|", 1, true)
      local eid = string.sub(ex, 1, sep - 1)
      if eid == id then verdict, vid = "new", id
      elseif string.sub(ex, sep + 1) ~= string.sub(iv, #id + 2) then verdict, vid = "conflict", eid
      else verdict, vid = "dup", eid end
    end
  end
  if not verdict then
    if iv ~= "" then
      redis.call("SET", KEYS[k + 2], iv, "PX", ttl)
      set[KEYS[k + 2]] = iv
    end
    local r = rows[tonumber(ARGV[a + 4])]
    -- The fields go to HSET as they are: a table of them, unpacked,
    -- costs Redis as much as a third of the write.
    redis.call("HSET", KEYS[k + 1], "spec", ARGV[a + 2], "state", "queued", "attempt", 1, "queue", r[1],
      "created", now, "queued", now, "not_before", now,
      "team", r[2], "template", r[3], "class", r[4], "tslots", r[5])
    if ARGV[a + 5] ~= "" then
      redis.call("HSET", KEYS[k + 3], "msg", ARGV[a + 5], "state", "pending", "pending_since", since)
      local q = pushes[r[6]]
      if not q then q = {}; pushes[r[6]] = q; pushOrder[#pushOrder + 1] = r[6] end
      q[#q + 1] = ARGV[a + 6]
    else
      redis.call("HSET", KEYS[k + 1], "ob", "1")
      redis.call("ZADD", KEYS[3], now, id)
    end
    added[na + 1], added[na + 2], na = now, id, na + 2
  elseif verdict ~= "new" then
    out[#out + 1], out[#out + 2], out[#out + 3] = i, verdict, vid
  end
end
-- One push per pending list: LPUSH of several IDs leaves them in the order
-- a push of each in turn would. It comes after the records, as the index
-- entries do: a command failing midway would leave the group half written,
-- but nothing here can fail once the first write is taken (Redis refuses
-- a script for memory before it runs, and only Ballast writes these keys,
-- each always as one type).
for _, key in ipairs(pushOrder) do redis.call("LPUSH", key, unpack(pushes[key])) end
if na > 0 then
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
	groups := groupsOf(calls, todo)
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
				cmds[g] = p.Do(ctx, groupCall(s, calls, group)...)
			}
			// The pipeline is one connection: a WAIT at its end counts the
			// replicas of every group in it (see replicated.go).
			wait = s.co.wait.add(ctx, p)
			return nil
		})
		unconfirmed := s.co.wait.check(wait)
		var again [][]int
		for g, group := range groups {
			res, err := cmds[g].Slice()
			if err != nil && round == 0 && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				again = append(again, group)
				continue
			}
			if err == nil && unconfirmed != nil {
				err = unconfirmed
			}
			err = s.co.wait.moved(ctx, s.rdb, err)
			if err == nil {
				err = exceptions(res, group, out)
			}
			for _, i := range group {
				switch {
				case err != nil:
					out[i] = submitReply{err: err}
				case out[i].verdict == "":
					out[i] = submitReply{verdict: "new", id: calls[i].job.ID}
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
		if out[i].verdict == "" && out[i].err == nil {
			out[i].err = fmt.Errorf("no reply to the submit of job %s", calls[i].job.ID)
		}
	}
	return out
}

// exceptions reads the triples of a group's reply into out, and says what
// is wrong with a reply that is not the script's.
func exceptions(res []any, group []int, out []submitReply) error {
	if len(res)%3 != 0 {
		return fmt.Errorf("queues.SubmitBatch: %d values in reply to a group of %d jobs", len(res), len(group))
	}
	for t := 0; t < len(res); t += 3 {
		k, ok := res[t].(int64)
		verdict, vok := res[t+1].(string)
		id, iok := res[t+2].(string)
		// A job recorded new under its own ID has no triple: one that says
		// "new" names another job, which is not the script's answer.
		if !ok || !vok || !iok || k < 1 || k > int64(len(group)) || out[group[k-1]].verdict != "" || verdict == "new" {
			return fmt.Errorf("queues.SubmitBatch: reply %v to a group of %d jobs is not the script's", res[t:t+3], len(group))
		}
		out[group[k-1]] = submitReply{verdict: verdict, id: id}
	}
	return nil
}

// groupsOf splits todo into groups of up to submitGroup calls, each of
// one time: a group's script takes the time once.
func groupsOf(calls []submitCall, todo []int) [][]int {
	var groups [][]int
	for lo := 0; lo < len(todo); {
		hi := lo + 1
		for hi < len(todo) && hi-lo < submitGroup && calls[todo[hi]].now.Equal(calls[todo[lo]].now) {
			hi++
		}
		groups = append(groups, todo[lo:hi])
		lo = hi
	}
	return groups
}

// groupRowOf is a job's row in a group's table.
type groupRowOf struct {
	queue, team, template, class string
	slots                        int
}

// groupCall lays out the EVALSHA of submitManyScript for the calls of
// group, which share one time (see groupsOf), as the command's arguments.
// A string or a byte slice handed to go-redis as an interface is copied to
// the heap, and an inline job has eight of them: the job's own values go
// instead as pointers into its call, and the keys and the idempotency
// value it makes up are written into one buffer for the group, so a job
// costs no allocation here.
func groupCall(s *Store, calls []submitCall, group []int) []any {
	var rows []groupRowOf
	var rowPending []int // each row's index among pending, 0 for none
	var pending []string
	jobRow := make([]int, len(group))
	made := 0 // bytes of the values made up below
	for g, i := range group {
		c := &calls[i]
		spec := &c.job.Spec
		r := groupRowOf{c.job.Queue, spec.Team, spec.Template, string(spec.Class), usageSlots(*spec)}
		k := slices.Index(rows, r) // a batch has a row or two
		if k < 0 {
			k = len(rows)
			rows = append(rows, r)
			rowPending = append(rowPending, 0)
		}
		if c.inline && rowPending[k] == 0 {
			// A queue has one pending list, so a row names at most one.
			p := slices.Index(pending, c.task.pending)
			if p < 0 {
				p = len(pending)
				pending = append(pending, c.task.pending)
			}
			rowPending[k] = p + 1
		}
		jobRow[g] = k + 1
		made += 2*len(c.job.ID) + len(c.job.Spec.IdempotencyKey) + 1 + len(c.sum)
	}
	nkeys := 3 + len(pending) + 3*len(group)
	now := calls[group[0]].now
	cmd := make([]any, 0, 3+nkeys+groupHead+groupRow*len(rows)+submitArgs*len(group))
	cmd = append(cmd, "evalsha", submitManyScript.Hash(), nkeys, s.ns.JobIndex(), s.ns.ActiveJobs(), s.ns.Outbox())
	for p := range pending {
		cmd = append(cmd, &pending[p])
	}
	// A span keeps the bytes it was cut from even if buf grows past it
	// later; made is only so that it need not.
	jobPrefix, idemPrefix := s.ns.JobPrefix(), s.ns.Idempotency("")
	buf := make([]byte, 0, made+len(group)*(len(jobPrefix)+len(idemPrefix)))
	spans := make([]groupArg, 0, 3*len(group))
	for _, i := range group {
		c := &calls[i]
		lo := len(buf)
		buf = append(append(buf, jobPrefix...), c.job.ID...)
		spans = append(spans, groupArg(buf[lo:len(buf):len(buf)]))
		lo = len(buf)
		buf = append(append(buf, idemPrefix...), c.job.Spec.IdempotencyKey...)
		spans = append(spans, groupArg(buf[lo:len(buf):len(buf)]))
		lo = len(buf)
		if c.job.Spec.IdempotencyKey != "" {
			buf = append(append(append(buf, c.job.ID...), '|'), c.sum...)
		}
		spans = append(spans, groupArg(buf[lo:len(buf):len(buf)]))
		// spans has its whole length's capacity: it never moves, and
		// these pointers stay good.
		job := &spans[len(spans)-3]
		cmd = append(cmd, job, &spans[len(spans)-2])
		if c.inline {
			cmd = append(cmd, &c.task.key)
		} else {
			cmd = append(cmd, job)
		}
	}
	cmd = append(cmd, now.UnixMilli(), s.opts.IdempotencyTTL.Milliseconds(), now.UnixNano(), len(pending), len(rows))
	for k := range rows {
		r := &rows[k]
		cmd = append(cmd, &r.queue, &r.team, &r.template, &r.class, r.slots, rowPending[k])
	}
	for g, i := range group {
		c := &calls[i]
		if c.inline {
			cmd = append(cmd, &c.job.ID, (*groupArg)(&c.body), &spans[3*g+2], jobRow[g], (*groupArg)(&c.task.msg), &c.task.id)
		} else {
			cmd = append(cmd, &c.job.ID, (*groupArg)(&c.body), &spans[3*g+2], jobRow[g], "", "")
		}
	}
	return cmd
}

// groupArg is a byte slice that go-redis writes as it is: a pointer to one
// in an interface costs no allocation, where the slice itself would.
type groupArg []byte

// MarshalBinary is the bytes themselves.
func (a *groupArg) MarshalBinary() ([]byte, error) { return *a, nil }
