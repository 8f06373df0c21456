package checkpoint

import "context"

// Ledger is where a checkpoint becomes the job's: the job record. The worker
// implements it with the ledger of queues/checkpoints.
type Ledger interface {
	// Commit makes manifestKey the job's newest checkpoint and token its
	// BALLAST_RESUME_FROM, in one fenced step: it refuses unless attempt
	// is still the job's current attempt (run by this worker) and seq is
	// greater than that of the attempt's last commit. It keeps the keep
	// newest committed keys and drops older ones.
	Commit(ctx context.Context, jobID string, attempt int, seq int64, manifestKey, token string, keep int) error
	// Committed lists the committed manifest keys, newest first.
	Committed(ctx context.Context, jobID string) ([]string, error)
}
