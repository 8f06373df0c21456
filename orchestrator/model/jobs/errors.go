package jobs

import (
	"errors"
	"strings"
)

// ErrUnknownTemplate is returned (wrapped in a FieldError) when a submission
// names a template the config does not declare.
var ErrUnknownTemplate = errors.New("unknown template")

// ErrUnavailable marks errors where the job store (Redis) could not be reached
// or did not answer. The submission may or may not have been recorded: retry
// with the same idempotency key, which never creates a second job.
var ErrUnavailable = errors.New("job store unavailable")

// ErrIdempotencyConflict is returned when an idempotency key is reused with a
// different request.
var ErrIdempotencyConflict = errors.New("idempotency key reused with a different request")

// ErrNotFound is returned for an unknown job ID.
var ErrNotFound = errors.New("no such job")

// FieldError says which input field is wrong and how to fix it.
type FieldError struct {
	// Field is a dotted path such as "params.epochs" or "templates.train.timeout".
	Field string `json:"field"`
	// Message says what is wrong and, where it can, what to write instead.
	Message string `json:"message"`
	// Err is an optional sentinel for errors.Is.
	Err error `json:"-"`
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Unwrap exposes the sentinel, if any.
func (e *FieldError) Unwrap() error { return e.Err }

// ValidationError collects every problem of one input, so a user fixes them all
// in one round instead of one per try.
type ValidationError struct {
	Problems []*FieldError `json:"problems"`
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Error()
	}
	return "invalid input: " + strings.Join(parts, "; ")
}

// Unwrap lets errors.Is and errors.As see each problem.
func (e *ValidationError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p
	}
	return out
}

// problems accumulates field errors; err returns nil when there are none.
type problems struct{ list []*FieldError }

func (p *problems) add(field, msg string) {
	p.list = append(p.list, &FieldError{Field: field, Message: msg})
}

func (p *problems) addErr(field string, msg string, sentinel error) {
	p.list = append(p.list, &FieldError{Field: field, Message: msg, Err: sentinel})
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &ValidationError{Problems: p.list}
}
