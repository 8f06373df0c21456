package queues

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Restored says what Restore did with one job.
type Restored string

// The outcomes of Restore.
const (
	// RestoreCreated: the record was missing and is written again, its
	// attempt queued.
	RestoreCreated Restored = "created"
	// RestorePresent: the record is there; nothing was written.
	RestorePresent Restored = "present"
	// RestoreResubmitted: the job's idempotency key names another job:
	// the client submitted it again after the loss, and that job runs it.
	RestoreResubmitted Restored = "resubmitted"
)

// Restoring is one job to write again after Redis lost its record.
type Restoring struct {
	ID      string
	Spec    jobs.Spec
	Queue   Queue
	Created time.Time
	// Attempt is the attempt to queue: one past any the job had, so that
	// a delivery or a worker of an old attempt that outlived the loss is
	// stale to every script.
	Attempt int
}

// restoreScript writes a lost job's record again unless it is there, or
// its idempotency key now names another job.
// KEYS: job, idem, index, outbox, active.
// ARGV: id, spec, queue, created ms, attempt, idemTTLms, hasIdem,
// fingerprint, now ms, team, template, class, tslots.
// Returns {"created"|"present"|"resubmitted", id}.
var restoreScript = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 1 then return {"present", ARGV[1]} end
if ARGV[7] == "1" then
  local ex = redis.call("GET", KEYS[2])
  if ex then
    local eid = string.sub(ex, 1, string.find(ex, "|", 1, true) - 1)
    if eid ~= ARGV[1] then return {"resubmitted", eid} end
  else
    redis.call("SET", KEYS[2], ARGV[1] .. "|" .. ARGV[8], "PX", ARGV[6])
  end
end
redis.call("HSET", KEYS[1], "spec", ARGV[2], "state", "queued", "attempt", ARGV[5], "queue", ARGV[3],
  "created", ARGV[4], "queued", ARGV[9], "not_before", ARGV[9],
  "team", ARGV[10], "template", ARGV[11], "class", ARGV[12], "tslots", ARGV[13], "ob", "1", "restored", ARGV[9])
redis.call("ZADD", KEYS[3], ARGV[4], ARGV[1])
redis.call("ZADD", KEYS[5], ARGV[9], ARGV[1])
redis.call("ZADD", KEYS[4], ARGV[9], ARGV[1])
return {"created", ARGV[1]}
`)

// Restore writes r's record again if it is missing, queued at r.Attempt,
// and enqueues that attempt. It is repeatable: a record that is there is
// left alone (RestorePresent), so a second recovery creates nothing. The
// record goes in the outbox first, so a crash before the enqueue leaves
// the attempt to the outbox reconciler, as a submit does. other names the
// job that holds r's idempotency key for RestoreResubmitted.
func (s *Store) Restore(ctx context.Context, r Restoring) (res Restored, other string, err error) {
	if err := checkQueue("queues.Restore", r.Queue, false); err != nil {
		return "", "", err
	}
	body, err := encodeSpec(r.Spec)
	if err != nil {
		return "", "", fmt.Errorf("queues.Restore %s: encode spec: %w", r.ID, err)
	}
	sum, err := requestSum(r.Spec)
	if err != nil {
		return "", "", fmt.Errorf("queues.Restore %s: encode spec: %w", r.ID, err)
	}
	hasIdem := "0"
	if r.Spec.IdempotencyKey != "" {
		hasIdem = "1"
	}
	now := s.opts.Now()
	attempt := max(r.Attempt, 1)
	out, err := restoreScript.Run(ctx, s.rdb,
		[]string{s.ns.Job(r.ID), s.ns.Idempotency(r.Spec.IdempotencyKey), s.ns.JobIndex(), s.ns.Outbox(), s.ns.ActiveJobs()},
		r.ID, body, string(r.Queue), r.Created.UnixMilli(), attempt, s.opts.IdempotencyTTL.Milliseconds(), hasIdem,
		hex.EncodeToString(sum[:16]), now.UnixMilli(), r.Spec.Team, r.Spec.Template, string(r.Spec.Class), usageSlots(r.Spec)).StringSlice()
	if err != nil {
		return "", "", wrap("queues.Restore", err)
	}
	if len(out) != 2 {
		return "", "", fmt.Errorf("queues.Restore: unexpected script reply %q", out)
	}
	res = Restored(out[0])
	if res != RestoreCreated {
		return res, out[1], nil
	}
	at := now.UTC().Truncate(time.Millisecond)
	j := jobs.Job{ID: r.ID, Spec: r.Spec, State: jobs.StateQueued, Attempt: attempt, Queue: string(r.Queue),
		CreatedAt: r.Created.UTC().Truncate(time.Millisecond), QueuedAt: at, NotBefore: at}
	if err := s.enqueue(ctx, j); err != nil {
		// Recorded, in the outbox: the leader's reconciler enqueues it.
		return res, "", nil
	}
	if err := confirmScript.Run(ctx, s.rdb, []string{s.ns.Job(r.ID), s.ns.Outbox()}, r.ID, attempt).Err(); err != nil {
		return res, "", nil // the reconciler confirms it later
	}
	return res, "", nil
}
