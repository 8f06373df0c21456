package client

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// ErrNoIntake means nothing answered: no controller is running, or it
// listens on another subject prefix or address.
var ErrNoIntake = errors.New("no Ballast intake is running")

// Error is the intake's answer to a refused submission.
//
// errors.Is(err, jobs.ErrUnavailable) holds for CodeUnavailable and
// errors.Is(err, jobs.ErrIdempotencyConflict) for CodeConflict; errors.As
// to *jobs.ValidationError works for CodeInvalid and CodeTooLarge and gives
// the bad fields.
type Error struct {
	Code     intake.Code
	Message  string
	Problems []*jobs.FieldError
	// Status is the HTTP status, 0 over NATS.
	Status int
}

// Error reads "ballast CODE: MESSAGE: FIELD: PROBLEM; ...".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ballast %s: %s", e.Code, e.Message)
	for i, p := range e.Problems {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

// Is maps the codes onto the job model's sentinels.
func (e *Error) Is(target error) bool {
	switch e.Code {
	case intake.CodeUnavailable:
		return target == jobs.ErrUnavailable
	case intake.CodeConflict:
		return target == jobs.ErrIdempotencyConflict
	case intake.CodeTooLarge:
		return target == intake.ErrTooLarge
	}
	return false
}

// As gives a *jobs.ValidationError for invalid and too large submissions.
func (e *Error) As(target any) bool {
	ve, ok := target.(**jobs.ValidationError)
	if !ok || (e.Code != intake.CodeInvalid && e.Code != intake.CodeTooLarge) {
		return false
	}
	problems := make([]*jobs.FieldError, 0, len(e.Problems)+1)
	for _, p := range e.Problems {
		q := *p
		if e.Code == intake.CodeTooLarge {
			q.Err = intake.ErrTooLarge
		}
		problems = append(problems, &q)
	}
	if len(problems) == 0 {
		// A ValidationError names at least one field.
		problems = append(problems, &jobs.FieldError{Field: "body", Message: e.Message})
	}
	*ve = &jobs.ValidationError{Problems: problems}
	return true
}
