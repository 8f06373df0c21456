package checkpoints

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// ErrFenced is the refusal of a checkpoint commit: the attempt is no
// longer the job's current one on this worker, or its sequence number
// does not grow. The checkpoint it names is never restored.
var ErrFenced = errors.New("checkpoint commit refused")

// commitScript makes a manifest the job's newest checkpoint and its token
// the resume point, in one step fenced like every other write of a running
// attempt: the record must be running this attempt on this worker. Within
// the attempt the sequence must grow, so a save that lost a race with a
// newer one (or a retried call that already landed) cannot put an older
// checkpoint back on top. A new attempt starts its own sequence: the
// attempt number already orders attempts. The list keeps the keep newest
// keys; the store's collector deletes what falls off.
// KEYS: job, list. ARGV: attempt, worker, seq, manifest, token, keep, now.
// Returns "ok" | "gone" | "stale" (attempt, state or worker) | "seq".
var commitScript = redis.NewScript(`
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "worker", "ck_attempt", "ck_seq")
if not st[1] then return "gone" end
if st[1] ~= "running" or tonumber(st[2]) ~= tonumber(ARGV[1]) or st[3] ~= ARGV[2] then return "stale" end
if tonumber(st[4]) == tonumber(ARGV[1]) and tonumber(ARGV[3]) <= (tonumber(st[5]) or 0) then return "seq" end
redis.call("HSET", KEYS[1], "checkpoint", ARGV[5], "checkpoint_at", ARGV[7],
  "ck_manifest", ARGV[4], "ck_attempt", ARGV[1], "ck_seq", ARGV[3])
redis.call("LPUSH", KEYS[2], ARGV[4])
redis.call("LTRIM", KEYS[2], 0, tonumber(ARGV[6]) - 1)
return "ok"
`)

// Ledger commits one worker's checkpoints in job records; it is the
// ledger of workers/checkpoint.
type Ledger struct {
	s      *Store
	worker string
}

// Ledger returns the ledger through which worker commits the checkpoints
// of the attempts it runs.
func (s *Store) Ledger(worker string) *Ledger { return &Ledger{s: s, worker: worker} }

// Commit makes manifest the job's newest checkpoint and token its
// BALLAST_RESUME_FROM, unless the attempt moved on or seq does not grow
// (ErrFenced). keep bounds the list of committed manifests.
func (l *Ledger) Commit(ctx context.Context, jobID string, attempt int, seq int64, manifest, token string, keep int) error {
	if keep < 1 {
		return fmt.Errorf("checkpoints.Commit: keep %d, want 1 or more", keep)
	}
	k := l.s.k
	res, err := commitScript.Run(ctx, k.Redis(), []string{k.Namespace().Job(jobID), l.s.list(jobID)},
		attempt, l.worker, seq, manifest, token, keep, k.Now().UnixMilli()).Text()
	if err != nil {
		return queues.Wrap("checkpoints.Commit", err)
	}
	switch res {
	case "ok":
		return nil
	case "gone":
		return fmt.Errorf("checkpoints.Commit %q: %w", jobID, jobs.ErrNotFound)
	case "seq":
		return fmt.Errorf("checkpoints.Commit %q attempt %d: %w: sequence %d does not grow", jobID, attempt, ErrFenced, seq)
	default:
		return fmt.Errorf("checkpoints.Commit %q attempt %d: %w: not the current attempt on worker %q", jobID, attempt, ErrFenced, l.worker)
	}
}

// Committed lists the job's committed checkpoint manifests, newest first.
func (l *Ledger) Committed(ctx context.Context, jobID string) ([]string, error) {
	return l.s.Committed(ctx, jobID)
}

// Committed lists the job's committed checkpoint manifests, newest first:
// what a reader of the ledger (the API, the CLI) lists, whoever committed
// them.
func (s *Store) Committed(ctx context.Context, jobID string) ([]string, error) {
	keys, err := s.k.Redis().LRange(ctx, s.list(jobID), 0, -1).Result()
	if err != nil {
		return nil, queues.Wrap("checkpoints.Committed", err)
	}
	return keys, nil
}
