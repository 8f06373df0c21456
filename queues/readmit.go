package queues

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Readmitted work goes first.
//
// A job sent back to its queue after it was admitted once (its worker
// died, left, was restarted or drained; it was preempted: a reclaim, a
// migration, a spot notice; or a worker took its delivery and never
// claimed it) has waited its turn already. asynq pushes new tasks on the
// left of a queue's pending list and every consumer (Take, asynq's own
// dequeue) pops from the right, so a plain enqueue would put such a job
// behind everything submitted since: with 800 jobs queued, a dead
// worker's jobs started again minutes after their requeue.
//
// So every script that sends an admitted attempt back marks the record
// "readmit", and enqueue, seeing the mark, writes the task itself with
// readmitScript: on the right of the pending list, behind only the
// readmitted deliveries there that were admitted earlier (created
// before it, job ID breaking ties), which is the order the policy's queue
// order gives readmitted jobs (policy.Job.Readmitted) and the simulator
// models. The mark stays with the job while it waits, so a later move
// (lend, unlend) or the outbox's enqueue keeps it ahead; a retry after a
// failure clears it, since a retry waits out its back-off as new work.
//
// The ordering is within one queue: strict priority between queues (core
// before loan on fixed workers) is the consumer's and does not change.

// readmitField is the task hash field, beside asynq's own, holding when
// a readmitted delivery's job was first admitted (Unix ms): the order
// among readmitted deliveries. asynq reads only the fields it knows.
const readmitField = "ballast_admitted"

// maxReadmitWalk bounds how many readmitted deliveries one enqueue steps
// over to find its place: a script must stay short however many workers
// died at once. Past it the delivery waits behind those it looked at, still
// ahead of every job never taken.
const maxReadmitWalk = 512

// readmitScript creates a readmitted attempt's asynq task (the layout of
// asynqtask.go) and puts its ID at the head of the pending list, behind the
// readmitted IDs there admitted before it. KEYS: task, pending. ARGV:
// message, task ID, pending_since (ns), admitted (ms), task key prefix,
// job ID. Returns 0 when the task exists (enqueue is repeatable), else 1.
// Both keys are in the queue's slot, so the script runs on Redis Cluster
// too.
var readmitScript = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 1 then return 0 end
redis.call("HSET", KEYS[1], "msg", ARGV[1], "state", "pending", "pending_since", ARGV[3], "` + readmitField + `", ARGV[4])
local mine = tonumber(ARGV[4])
local ahead = {}
while #ahead < ` + strconv.Itoa(maxReadmitWalk) + ` do
  local tid = redis.call("LINDEX", KEYS[2], -1)
  if not tid then break end
  local at = tonumber(redis.call("HGET", ARGV[5] .. tid, "` + readmitField + `"))
  if not at or at > mine then break end
  if at == mine then
    local jid = string.match(tid, "^(.+):%d+$")
    if not jid or jid > ARGV[6] then break end
  end
  ahead[#ahead + 1] = redis.call("RPOP", KEYS[2])
end
redis.call("RPUSH", KEYS[2], ARGV[2])
for i = #ahead, 1, -1 do redis.call("RPUSH", KEYS[2], ahead[i]) end
return 1
`)

// enqueueReadmitted creates the task of j's current attempt ahead of the
// jobs never taken in its queue (see above). j is neither sized (placed by
// the policy, in its queue order) nor delayed (asynq's scheduled set).
func (s *Store) enqueueReadmitted(ctx context.Context, j jobs.Job) error {
	names := s.asynqNamesOf(Queue(j.Queue))
	if err := s.publishQueue(ctx, names.queue); err != nil {
		return err
	}
	id := TaskID(j.ID, j.Attempt)
	msg := appendAsynqMessage(make([]byte, 0, 128), names.queue, &j, id)
	err := s.runScript(ctx, readmitScript, []string{names.taskPrefix + id, names.pending},
		msg, id, s.opts.Now().UnixNano(), j.CreatedAt.UnixMilli(), names.taskPrefix, j.ID).Err()
	if err != nil {
		return fmt.Errorf("queues.enqueue %s: %w (the job is recorded and will be enqueued when Redis answers: %v)",
			id, jobs.ErrUnavailable, err)
	}
	return nil
}

// Readmit is Move for an attempt that a worker took and never claimed (it
// died or froze in between): the job was admitted once, so its next
// attempt goes ahead of the jobs never taken, as a requeued one does.
func (s *Store) Readmit(ctx context.Context, jobID string, attempt int, to Queue, reason string) (int, error) {
	return s.move(ctx, jobID, attempt, to, reason, true, false)
}
