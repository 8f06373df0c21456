package queues

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Taking a delivery and claiming it in one step.
//
// Through asynq's server a shared job costs a worker three scripts on
// Redis: asynq's dequeue (six calls: the paused check, the pop into the
// active list, two writes to the task, the lease, the read of the
// message), the claim (four) and asynq's done (five or six: the active
// list, the lease, the task, two counters). The job record already does
// what the active list and the lease are for: it says which worker runs
// the attempt, and the worker's heartbeats are its lease. So where the
// store writes the tasks itself (see asynqtask.go) a worker takes its
// shared deliveries with takeScript instead: it pops the task ID from
// asynq's pending list, deletes the task, and claims the attempt the ID
// names, all at once. A job then costs the worker two scripts (take and
// finish), nothing is written that only asynq's server reads, and the
// round trip of the done is gone.
//
// Nothing is lost and nothing runs twice, for the reasons the claim gives
// that already (DESIGN.md, "Sources of truth"): the task only ever carried
// "attempt N of job J", and the record decides whether N is current. A
// stale ID is dropped as the claim would have refused it. A take whose
// reply is lost leaves attempts on record as the worker's that the worker
// does not know of: its retry, under the same token, is answered with
// them (see takeScript); a worker that stops before any retry gets through
// requeues them as it leaves the registry (Leave), and a worker that dies
// has them requeued by recovery with the rest of its jobs.
//
// The pending list, its paused marker and the task hash are asynq's
// layout, as the submit script writes them (asynqtask.go);
// TestTakeReadsWhatAsynqWrites takes tasks that asynq's own client
// enqueued and checks with asynq's Inspector that none is left behind.
// Redis Cluster keeps asynq's server: its keys live in other slots than
// the records', and no script may touch both.

// maxTakePops bounds the pops one take makes beyond the deliveries it
// asks for: stale deliveries (moved or cancelled attempts) are popped and
// dropped on the way, and a long run of them must not make one script run
// for long.
const maxTakePops = 64

// takeScript pops up to n deliveries from the first queues (in order,
// strict priority) that are not paused and claims each for the worker.
// KEYS: tombstone, incarnation, workerJobs, outbox, then per queue its
// pending list and its paused marker. ARGV: worker, now, incarnation ("" =
// unchecked), pool, n, job key prefix, take token, retry ("0" a first
// try; "1" the previous try of this token failed; "2" that, and take
// nothing new), then per queue its task key prefix, then the fit: the
// whole slots free ("" = take without fitting) and the rooms for GPU
// shares, comma-separated thousandths (see TakeFit).
// Each claim stamps the record's "take" with the token (one more field in
// a write the claim makes anyway), so that a retry finds what a try whose
// reply was lost claimed, and answers with it instead of popping more. Only
// a retry pays for that search (the worker's running set).
// Returns "fenced" (nothing popped), or {dropped, id, claimFields values
// ..., id, ...}: dropped counts the stale or unreadable deliveries
// removed, and is -1 for a retry's answer (values as on record).
var takeScript = redis.NewScript(`
local nq = (#KEYS - 4) / 2
local mget = {KEYS[1], KEYS[2]}
for q = 1, nq do mget[#mget + 1] = KEYS[4 + 2 * q] end
local f = redis.call("MGET", unpack(mget))
if f[1] or (ARGV[3] ~= "" and f[2] and f[2] ~= ARGV[3]) then return "fenced" end
local want, pops, dropped = tonumber(ARGV[5]), 0, 0
local out, got = {0}, 0
if ARGV[8] ~= "0" then
  -- A retry of a take whose reply may have been lost: what it claimed
  -- carries its token, and is answered again before anything new.
  for _, jid in ipairs(redis.call("SMEMBERS", KEYS[3])) do
    if redis.call("HGET", ARGV[6] .. jid, "take") == ARGV[7] then
      local v = redis.call("HMGET", ARGV[6] .. jid, ` + luaStrings(claimFields) + `)
      if v[1] == "running" and v[4] == ARGV[1] then
        redis.call("HSET", ARGV[6] .. jid, "reclaimed", ARGV[2]) -- see unrecorded.go
        out[#out + 1] = jid
        for i = 1, #v do out[#out + 1] = v[i] end
        got = got + 1
      end
    end
  end
  if got > 0 or ARGV[8] == "2" then out[1] = -1; return out end
end
-- With a fit, the head of a queue is looked at before it is popped, and
-- taken only if it fits what the worker has free; one that does not
-- stops the take, so that nothing behind it overtakes it here.
local fit = ARGV[9 + nq] ~= ""
local whole, rooms, full = tonumber(ARGV[9 + nq]) or 0, {}, false
if fit then
  for r in string.gmatch(ARGV[10 + nq], "%d+") do rooms[#rooms + 1] = tonumber(r) end
end
local function seat(spec)
  local ok, sp = pcall(cjson.decode, spec or "")
  local x = ok and type(sp) == "table" and tonumber(sp.gpu_share) or 0
  local s = 0
  if x > 0 and x < 1 then s = math.floor(x * ` + strconv.Itoa(jobs.GPUMilli) + ` + 0.5) end
  if s > 0 then
    local best = 0
    for i = 1, #rooms do
      if rooms[i] >= s and (best == 0 or rooms[i] < rooms[best]) then best = i end
    end
    if best > 0 then rooms[best] = rooms[best] - s; return true end
  end
  if whole < 1 then return false end
  whole = whole - 1
  if s > 0 then rooms[#rooms + 1] = ` + strconv.Itoa(jobs.GPUMilli) + ` - s end
  return true
end
for q = 1, nq do
  if not f[2 + q] and not full then
    while got < want and pops < want + ` + strconv.Itoa(maxTakePops) + ` do
      local tid
      if fit then
        tid = redis.call("LINDEX", KEYS[3 + 2 * q], -1)
      else
        tid = redis.call("RPOP", KEYS[3 + 2 * q])
      end
      if not tid then break end
      local jid, att = string.match(tid, "^(.+):(%d+)$")
      local v = jid and redis.call("HMGET", ARGV[6] .. jid, ` + luaStrings(claimFields) + `)
      local live = v and v[1] == "queued" and tonumber(v[2]) == tonumber(att) and (tonumber(v[5]) or 0) <= 1
      if live and fit and not seat(v[7]) then
        full = true
        break
      end
      if fit then redis.call("RPOP", KEYS[3 + 2 * q]) end
      pops = pops + 1
      redis.call("DEL", ARGV[8 + q] .. tid)
      if live then
        -- The fields go to HSET as they are, not through a table
        -- unpacked, which would cost Redis a third of the write again.
        redis.call("HSET", ARGV[6] .. jid, "state", "running", "worker", ARGV[1], "started", ARGV[2], "pool", ARGV[4],
          "runs", tostring((tonumber(v[6]) or 0) + 1), "take", ARGV[7])
        if v[3] == "1" then
          redis.call("ZREM", KEYS[4], jid)
          redis.call("HSET", ARGV[6] .. jid, "ob", "0")
        end
        redis.call("SADD", KEYS[3], jid)
        out[#out + 1] = jid
        for i = 1, #v do out[#out + 1] = v[i] end
        got = got + 1
      else
        dropped = dropped + 1
      end
    end
  end
end
out[1] = dropped
return out
`)

// Took is what one Take got: the attempts now running on the claimant,
// and how many stale deliveries it dropped on the way.
type Took struct {
	Jobs    []jobs.Job
	Dropped int
	// Unreadable lists jobs claimed whose records cannot be decoded (a
	// spec written by a newer version, or damaged): they stay on record
	// as running on the claimant, who must not run what it cannot read,
	// until it leaves the registry, which requeues them.
	Unreadable []string
}

// CanTake reports whether workers of this store may take their shared
// deliveries with Take: the store writes tasks itself (one Redis, not a
// cluster).
func (s *Store) CanTake() bool { return !s.opts.SeparateEnqueue }

// TakeRequest is one call of Take.
type TakeRequest struct {
	// Queues are looked in in order: the first one that is not empty and
	// not paused in asynq is emptied first.
	Queues []Queue
	// Claimant is who takes.
	Claimant Claimant
	// Max is the most deliveries to take.
	Max int
	// Token names the take. A caller that got an error retries with the
	// same token and Retry set: a try that committed but whose reply was
	// lost is then answered again, not repeated.
	Token string
	Retry bool
	// AgainOnly, with Retry, takes nothing new: it only answers with what
	// a try of the token claimed, for a worker that stops taking work but
	// must not leave a take in doubt.
	AgainOnly bool
	// Fit, when set, takes only deliveries that fit it, in queue order.
	Fit *TakeFit
}

// TakeFit is what a GPU worker has free for a take: jobs that ask for a
// share of a GPU (jobs.Size.GPUShare) pack onto devices that hold shares
// already, so one whole slot may run several of them, and a take must
// know each job's share before it pops it. With a fit, a job is taken
// while it fits, as the worker's allocator packs (workers/gpu): a share
// into the fullest room it fits, else into a whole slot, which leaves
// the rest of that device as a room; a whole job into a whole slot. The
// first job that does not fit ends the take, and stays first in line.
type TakeFit struct {
	// Whole is how many whole slots the worker holds for the take.
	Whole int
	// Rooms are the thousandths free on each device holding shares.
	Rooms []int
}

// Take pops up to r.Max deliveries from r.Queues and claims each for
// r.Claimant: every job returned is running on its worker, as after
// ClaimBy. It returns ErrFenced, having taken nothing, when the
// claimant's identity is fenced. Only for a store that CanTake.
func (s *Store) Take(ctx context.Context, r TakeRequest) (Took, error) {
	if !s.CanTake() {
		return Took{}, fmt.Errorf("queues.Take: this store enqueues through asynq (Redis Cluster); consume with asynq's server")
	}
	if r.Max < 1 || len(r.Queues) == 0 {
		return Took{}, nil
	}
	if r.Token == "" {
		return Took{}, fmt.Errorf("queues.Take: a take needs a token, for its retries")
	}
	c := r.Claimant
	now := s.opts.Now().UnixMilli()
	retry := "0"
	switch {
	case r.Retry && r.AgainOnly:
		retry = "2"
	case r.Retry:
		retry = "1"
	}
	keys := make([]string, 0, 4+2*len(r.Queues))
	keys = append(keys, s.ns.WorkerTombstone(c.Worker), s.ns.WorkerIncarnation(c.Worker), s.ns.WorkerJobs(c.Worker), s.ns.Outbox())
	args := make([]any, 0, 10+len(r.Queues))
	args = append(args, c.Worker, now, c.Incarnation, c.Pool, r.Max, s.ns.JobPrefix(), r.Token, retry)
	for _, q := range r.Queues {
		qname := s.ns.AsynqQueue(q)
		keys = append(keys, asynqPendingKey(qname), asynqPausedKey(qname))
		args = append(args, asynqTaskPrefix(qname))
	}
	whole, rooms := "", ""
	if f := r.Fit; f != nil {
		whole = strconv.Itoa(f.Whole)
		rs := make([]string, len(f.Rooms))
		for i, m := range f.Rooms {
			rs[i] = strconv.Itoa(m)
		}
		rooms = strings.Join(rs, ",")
	}
	args = append(args, whole, rooms)
	// Durable, as a claim is: with a replica wait configured, a worker
	// starts what it took only once the replicas hold the take. One they
	// do not confirm stands on the master as the worker's, with its tasks
	// popped, so no redelivery brings it back: the worker's retry of the
	// take, under the same token, is answered with it (see takeScript),
	// and its WAIT covers the first try.
	v, err := s.co.runDurable(ctx, takeScript, keys, args...).Result()
	if err != nil {
		return Took{}, wrapUnconfirmed("queues.Take", "the take",
			"what it took does not start until a retry of the take, under the same token, is answered with it", err)
	}
	if v == "fenced" {
		return Took{}, fmt.Errorf("queues.Take by %s: %w", c.Worker, ErrFenced)
	}
	list, ok := v.([]any)
	if !ok || len(list) < 1 || (len(list)-1)%(1+len(claimFields)) != 0 {
		return Took{}, fmt.Errorf("queues.Take: unexpected script reply %v", v)
	}
	dropped, _ := list[0].(int64)
	again := dropped < 0
	t := Took{Dropped: int(max(dropped, 0)), Jobs: make([]jobs.Job, 0, (len(list)-1)/(1+len(claimFields)))}
	for rest := list[1:]; len(rest) > 0; rest = rest[1+len(claimFields):] {
		id, _ := rest[0].(string)
		vals := rest[1 : 1+len(claimFields)]
		var j jobs.Job
		var err error
		if again {
			j, err = recordedJob(id, vals)
		} else {
			j, err = claimedJob(id, vals, c, c.Pool, now)
		}
		if err != nil {
			t.Unreadable = append(t.Unreadable, id)
			continue
		}
		t.Jobs = append(t.Jobs, j)
	}
	return t, nil
}

// recordedJob decodes a job from the claimFields values of its record.
func recordedJob(id string, vals []any) (jobs.Job, error) {
	return decodeRecordFrom(id, &claimRead{vals: vals})
}

// claimIndex is each claimFields name's position in a claim's values.
var claimIndex = func() map[string]int {
	m := make(map[string]int, len(claimFields))
	for i, f := range claimFields {
		m[f] = i
	}
	return m
}()

// claimRead is the fields a claim read, by position in claimFields, and,
// once claimed, what the claim itself wrote over them.
type claimRead struct {
	vals    []any
	claimed bool
	// What the claim wrote: state running, and these.
	worker, started, pool, runs string
}

func (c *claimRead) get(name string) string {
	if c.claimed {
		switch name {
		case "state":
			return string(jobs.StateRunning)
		case "worker":
			return c.worker
		case "started":
			return c.started
		case "pool":
			return c.pool
		case "runs":
			return c.runs
		}
	}
	i, ok := claimIndex[name]
	if !ok || i >= len(c.vals) {
		return ""
	}
	v, _ := c.vals[i].(string)
	return v
}

// claimedJob rebuilds the job a claim just gave to c from the claimFields
// values it read (before its own writes) and what it wrote.
func claimedJob(id string, vals []any, c Claimant, pool string, now int64) (jobs.Job, error) {
	r := &claimRead{vals: vals}
	runs := atoi(r.get("runs")) // as read, before the claim's own write
	r.claimed, r.worker, r.started, r.pool, r.runs = true, c.Worker, strconv.FormatInt(now, 10), pool, strconv.Itoa(runs+1)
	return decodeRecordFrom(id, r)
}

// forwardScript moves a queue's scheduled and retry tasks that are due to
// its pending list, as asynq's server does for the queues it consumes:
// without that server, the workers that take from a queue forward for it.
// KEYS: per queue its scheduled set, retry set and pending list. ARGV:
// now (Unix seconds, asynq's scores), now (Unix ns, pending_since), then
// per queue its task key prefix. Returns how many tasks moved.
var forwardScript = redis.NewScript(`
local moved = 0
for q = 1, #KEYS / 3 do
  for s = 0, 1 do
    local set = KEYS[3 * q - 2 + s]
    local due = redis.call("ZRANGEBYSCORE", set, "-inf", ARGV[1], "LIMIT", 0, 100)
    for _, id in ipairs(due) do
      redis.call("LPUSH", KEYS[3 * q], id)
      redis.call("ZREM", set, id)
      redis.call("HSET", ARGV[2 + q] .. id, "state", "pending", "pending_since", ARGV[2])
      moved = moved + 1
    end
  end
end
return moved
`)

// ForwardDue moves the due scheduled and retry tasks of qs to their
// pending lists (a retry back-off or a job's not-before has passed). A
// worker that takes from qs calls it as often as asynq's server would;
// many workers doing so at once is harmless, each move is atomic.
func (s *Store) ForwardDue(ctx context.Context, qs []Queue) (int, error) {
	if len(qs) == 0 {
		return 0, nil
	}
	now := s.opts.Now()
	keys := make([]string, 0, 3*len(qs))
	args := make([]any, 0, 2+len(qs))
	args = append(args, now.Unix(), now.UnixNano())
	for _, q := range qs {
		qname := s.ns.AsynqQueue(q)
		keys = append(keys, asynqScheduledKey(qname), asynqRetryKey(qname), asynqPendingKey(qname))
		args = append(args, asynqTaskPrefix(qname))
	}
	n, err := forwardScript.Run(ctx, s.rdb, keys, args...).Int()
	if err != nil {
		return 0, wrap("queues.ForwardDue", err)
	}
	return n, nil
}
