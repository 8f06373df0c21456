package intake

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/sweep"
)

// SweepSubmitPath is the HTTP route of sweep submissions.
const SweepSubmitPath = "/api/v1/sweeps"

// SweepSubmitter validates a sweep, records it and fans out its trials.
//
// Its errors follow the contract of Submitter: a *jobs.ValidationError is
// the caller's fault, jobs.ErrUnavailable means "maybe recorded, retry with
// the same idempotency key", jobs.ErrIdempotencyConflict means the key was
// used for another sweep, and anything else is an internal error.
// SubmitSweep must honour ctx: the intake does not abandon a call that
// overruns its timeout.
type SweepSubmitter interface {
	SubmitSweep(ctx context.Context, spec sweep.Spec) (SweepReceipt, error)
}

// SweepReceipt is the answer to an accepted sweep and the JSON of a
// successful reply.
type SweepReceipt struct {
	SweepID string `json:"sweep_id"`
	// Trials is the number of trials in the sweep.
	Trials int `json:"trials"`
	// Queued is the number of trials enqueued when the reply was sent;
	// max_parallel may hold the rest back.
	Queued int `json:"queued"`
	// Duplicate is true when the idempotency key matched an existing sweep:
	// the receipt describes that sweep and nothing new was enqueued.
	Duplicate bool `json:"duplicate"`
}

// SweepHTTPHandler serves POST /api/v1/sweeps (SweepSubmitPath) with a
// sweep.Spec of at most sweep.MaxSpecBytes: 201 with a SweepReceipt for a
// new sweep, 200 when the idempotency key found an existing one, and an
// ErrorBody with the code's status otherwise. Authentication, timeouts and
// logging are those of HTTPHandler. The caller mounts it next to
// HTTPHandler.
func SweepHTTPHandler(sw SweepSubmitter, token string) http.Handler {
	return newHTTPHandler(SweepSubmitPath, sweepHandler(sw, DefaultTimeout, slog.Default()), token)
}

// sweepHandler serves sweep.Spec on PREFIX.sweeps.submit and SweepSubmitPath.
func sweepHandler(sw SweepSubmitter, timeout time.Duration, log *slog.Logger) *handler[sweep.Spec, SweepReceipt] {
	return &handler[sweep.Spec, SweepReceipt]{
		noun:   "sweep",
		max:    sweep.MaxSpecBytes,
		hint:   "write a long list of trials as a grid or a random space, and send large inputs by reference",
		decode: sweep.DecodeSpec,
		logged: func(s sweep.Spec) []any { return []any{"template", s.Template, "idempotency_key", s.IdempotencyKey} },
		// A closure for the same reason as in jobHandler.
		call:    func(ctx context.Context, s sweep.Spec) (SweepReceipt, error) { return sw.SubmitSweep(ctx, s) },
		timeout: timeout,
		log:     log,
		accepted: func(r SweepReceipt) (bool, error) {
			if r.SweepID == "" {
				return false, errors.New("intake: the SweepSubmitter returned neither a sweep ID nor an error")
			}
			return r.Duplicate, nil
		},
	}
}
