package intake

import (
	"errors"
	"fmt"

	"github.com/ballastdev/ballast/jobs"
)

// ErrTooLarge marks the problem of a submission over jobs.MaxSubmissionBytes,
// which is answered with CodeTooLarge instead of CodeInvalid.
var ErrTooLarge = errors.New("submission too large")

// tooLarge is the validation error for a message of n bytes; n < 0 means the
// size is unknown because reading stopped at the limit.
func tooLarge(n int) error {
	msg := fmt.Sprintf("the message is %d bytes; the limit is %d", n, jobs.MaxSubmissionBytes)
	if n < 0 {
		msg = fmt.Sprintf("the message is over the limit of %d bytes", jobs.MaxSubmissionBytes)
	}
	return &jobs.ValidationError{Problems: []*jobs.FieldError{{
		Field:   "body",
		Message: msg + " (send large inputs by reference, e.g. a path or URL parameter)",
		Err:     ErrTooLarge,
	}}}
}
