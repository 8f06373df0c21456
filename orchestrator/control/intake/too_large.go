package intake

import (
	"errors"
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// ErrTooLarge marks the problem of a message over its size limit
// (jobs.MaxSubmissionBytes for a job, sweep.MaxSpecBytes for a sweep), which
// is answered with CodeTooLarge instead of CodeInvalid.
var ErrTooLarge = errors.New("submission too large")

// tooLarge is the validation error for a message of n bytes over limit; n < 0
// means the size is unknown because reading stopped at the limit. hint says
// how to make the message smaller.
func tooLarge(n, limit int, hint string) *jobs.ValidationError {
	msg := fmt.Sprintf("the message is %d bytes; the limit is %d", n, limit)
	if n < 0 {
		msg = fmt.Sprintf("the message is over the limit of %d bytes", limit)
	}
	return &jobs.ValidationError{Problems: []*jobs.FieldError{{
		Field:   "body",
		Message: msg + " (" + hint + ")",
		Err:     ErrTooLarge,
	}}}
}
