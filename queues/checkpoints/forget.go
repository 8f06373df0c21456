package checkpoints

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// forgetScript drops a job's list of committed checkpoints once the job
// has ended (or its record is gone): the list has no expiry of its own,
// unlike the record, its log and its metrics. A job still queued or
// running keeps it: its next attempt restores from it.
// KEYS: job, list. Returns 1 when the list was dropped (or absent), 0 when
// the job is still live.
var forgetScript = redis.NewScript(`
local st = redis.call("HGET", KEYS[1], "state")
if st == "queued" or st == "running" then return 0 end
redis.call("DEL", KEYS[2])
return 1
`)

// Forget drops the ledger of an ended job's checkpoints, once their
// objects are gone from the checkpoint store; it reports false, changing
// nothing, for a job that is queued or running.
func (s *Store) Forget(ctx context.Context, jobID string) (bool, error) {
	n, err := forgetScript.Run(ctx, s.k.Redis(), []string{s.k.Namespace().Job(jobID), s.list(jobID)}).Int()
	if err != nil {
		return false, queues.Wrap("checkpoints.Forget", err)
	}
	return n == 1, nil
}
