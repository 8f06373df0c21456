package intake

import (
	"net/http"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Code classifies a failed submission so callers can decide what to do
// without parsing messages.
type Code string

// The error codes of the wire format.
const (
	// CodeInvalid: fix the fields in Problems; retrying unchanged fails again.
	CodeInvalid Code = "invalid"
	// CodeTooLarge: the message is over jobs.MaxSubmissionBytes, or
	// sweep.MaxSpecBytes for a sweep.
	CodeTooLarge Code = "too_large"
	// CodeUnavailable: the job may or may not be recorded; retry with the
	// same idempotency key.
	CodeUnavailable Code = "unavailable"
	// CodeConflict: the idempotency key was used for a different submission.
	CodeConflict Code = "conflict"
	// CodeUnauthorized: missing or wrong bearer token (HTTP only).
	CodeUnauthorized Code = "unauthorized"
	// CodeNotFound: no job has this ID (a status request for a job never
	// submitted, or whose record expired after the retention).
	CodeNotFound Code = "not_found"
	// CodeInternal: a bug or an unexpected failure; details are in the
	// intake's log, not in the reply.
	CodeInternal Code = "internal"
)

// HTTPStatus is the HTTP status that carries the code.
func (c Code) HTTPStatus() int {
	switch c {
	case CodeInvalid:
		return http.StatusBadRequest
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	case CodeConflict:
		return http.StatusConflict
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeNotFound:
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// Error is the wire form of a failed submission.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// Problems names each bad field, for CodeInvalid and CodeTooLarge.
	Problems []*jobs.FieldError `json:"problems,omitempty"`
}

// ErrorBody is the JSON of a failed reply, over NATS and HTTP alike:
// {"error":{"code":...,"message":...,"problems":[...]}}. A successful reply
// is a Receipt (or a SweepReceipt) and has no "error" key.
type ErrorBody struct {
	Error Error `json:"error"`
}
