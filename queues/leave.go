package queues

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// leaveScript is deregisterScript for a worker process that stops: first
// it requeues, as new attempts, whatever is still on record as running on
// the worker. After a drain nothing should be; what can be is an attempt
// the worker claimed without learning it did (a take or a claim whose
// reply was lost, with Redis failing until the stop). Nothing else would
// ever requeue it: recovery looks only at registered workers, and the
// policy leaves jobs on unknown workers alone.
// A gang is left to member 0 when the worker that leaves holds another
// member and a preemption is pending: that is the drain's hand-over (the
// worker asked member 0 to checkpoint and move the gang, see gang.go), and
// member 0 is doing it. Otherwise the gang is requeued whole here: the
// worker holds member 0, which can checkpoint nothing any more; member 0
// has exited 0, and runs nowhere to act on the request; or no move is
// pending because Redis lost it (the hand-over's request, or the worker's
// own requeue); and a gang one of whose members will never run
// again can only end when someone moves it (its other members' workers,
// were they to end their members with exit 0, would leave it running on
// record with no worker that names it).
// An attempt whose end the worker gave up recording (Redis failing for
// longer than the worker retries) is requeued too: that is the recovery
// the worker left it to, and, like a worker killed between a job's side
// effect and its result, it may run again.
// A process whose identity is fenced (the controller declared it dead, or
// a newer process took its ID over) changes nothing: the ID's attempts and
// registration are its successor's, or recovery's.
// KEYS: workers, worker, livesEnd, workerJobs, outbox, active, usage,
// tombstone, incarnation. ARGV: workerID, now, jobKeyPrefix,
// workerKeyPrefix, retentionMs, incarnation ("" = unchecked).
// Returns a flat {id, newAttempt, queue, ...} of the jobs requeued.
var leaveScript = redis.NewScript(usageLua + gangLua + requeueWorkerJobsLua + claimFenceLua + `
if claimFenced(KEYS[8], KEYS[9], ARGV[6]) then return {} end
local mine = {}
for _, id in ipairs(redis.call("SMEMBERS", KEYS[4])) do
  local k = ARGV[3] .. id
  if gangSize(k) <= 1 then
    mine[#mine + 1] = id
  else
    local st = redis.call("HMGET", k, "state", "attempt", "preempt", "m0", "d0")
    local handedOver = st[1] == "running" and st[3] and st[3] ~= "" and st[4] ~= st[2] .. "|" .. ARGV[1] and
      st[5] ~= st[2] .. "|1"
    if not handedOver then mine[#mine + 1] = id end
  end
end
local out = requeueJobs(mine, ARGV[1], KEYS[4], ARGV[3], ARGV[4], KEYS[5], KEYS[6], KEYS[7], ARGV[2], ARGV[2], ARGV[5], "stopped")
local life = redis.call("HGET", KEYS[2], "life")
if life then redis.call("HSETNX", KEYS[3], life, ARGV[2]) end
redis.call("ZREM", KEYS[1], ARGV[1])
redis.call("DEL", KEYS[2])
return out
`)

// Leave is Deregister for a worker process that stops: it also requeues,
// and enqueues, the attempts still on record as the worker's, which its
// process no longer runs, and returns them. incarnation is the process's
// (see ClaimAs): a fenced process leaves nothing and nobody's jobs moved.
func (s *Store) Leave(ctx context.Context, id, incarnation string) ([]Recovered, error) {
	v, err := leaveScript.Run(ctx, s.rdb,
		[]string{s.ns.Workers(), s.ns.Worker(id), s.ns.livesEnd(), s.ns.WorkerJobs(id), s.ns.Outbox(), s.ns.ActiveJobs(), s.ns.usage(),
			s.ns.WorkerTombstone(id), s.ns.WorkerIncarnation(id)},
		id, s.opts.Now().UnixMilli(), s.ns.JobPrefix(), s.ns.WorkerPrefix(), s.opts.Retention.Milliseconds(), incarnation).Slice()
	if err != nil {
		return nil, wrap("queues.Leave", err)
	}
	left := requeuedList(v, id)
	return left, s.enqueueRequeued(ctx, left)
}
