package queues

import "context"

// Under team shares core work waits in QueueHeld until the capacity
// policy's rule 9 admits it to core. An admitted attempt that is sent back
// for any reason but a reclaim (its worker died, left, drained or was
// restarted; it was never claimed; it was preempted to core) must wait for
// admission again: back in core it would skip rule 9 and could start ahead
// of an owner's in-share work, only to be reclaimed a tick later.
//
// So the record remembers the admission (heldAdmittedField, set by
// AdmitHeld), and every script that sends an admitted attempt back to core
// sends it to held instead (backToHeld), readmitted as ever, so it is
// first in line for the next admission. The mark is the job's, not a
// store option: every process that requeues (controller, workers, the
// recover command) sees it without knowing the config, and a job that was
// never held (shares off, burst work) is untouched. Any other move by the
// controller (shares turned off sends held work to core; overflow; lend)
// ends the admission and clears the mark. A retry after a failure goes
// back to held too, as new work (not readmitted), with its back-off in
// the record: the policy admits it only once the back-off has passed
// (policy.Job.NotBefore), so a failed job cannot come back above its
// team's share by way of core.

// heldAdmittedField is the job record field marking a core job rule 9
// admitted from held.
const heldAdmittedField = "held_admitted"

// heldAdmittedLua defines backToHeld(jobKey, queue): the queue a job sent
// back to queue goes to (held for core work rule 9 admitted).
var heldAdmittedLua = `
local function backToHeld(k, q)
  if q == "` + string(QueueCore) + `" and redis.call("HGET", k, "` + heldAdmittedField + `") == "1" then
    return "` + string(QueueHeld) + `"
  end
  return q
end
`

// AdmitHeld is Move to core for a job rule 9 admits from held: the record
// remembers the admission, so that the attempt goes back to held, not
// core, when it is sent back for any reason but a reclaim.
func (s *Store) AdmitHeld(ctx context.Context, jobID string, attempt int, reason string) (int, error) {
	return s.move(ctx, jobID, attempt, QueueCore, reason, false, true)
}
