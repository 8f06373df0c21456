package intake

import (
	"context"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Submitter validates and durably enqueues one submission.
//
// Errors drive the reply: a *jobs.ValidationError is the caller's fault,
// jobs.ErrUnavailable means "maybe recorded, retry with the same idempotency
// key", jobs.ErrIdempotencyConflict means the key was used for another
// request, and anything else is an internal error. Submit must honour ctx:
// the intake does not abandon a call that overruns its timeout.
type Submitter interface {
	Submit(ctx context.Context, s jobs.Submission) (Receipt, error)
}

// Receipt is the answer to an accepted submission, and the JSON of a
// successful reply.
type Receipt struct {
	JobID   string     `json:"job_id"`
	Attempt int        `json:"attempt"`
	State   jobs.State `json:"state"`
	Queue   string     `json:"queue"`
	// Duplicate is true when the idempotency key matched an existing job:
	// the receipt describes that job and nothing new was enqueued.
	Duplicate bool `json:"duplicate"`
	// Warning is set while Redis's loss of data is recorded and not yet
	// recovered: the job is accepted, but jobs accepted before the loss
	// may be missing until `ballast recover` runs.
	Warning string `json:"warning,omitempty"`
}
