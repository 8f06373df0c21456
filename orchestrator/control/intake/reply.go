package intake

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Messages of the replies whose wording is part of the contract: they tell
// the caller what to do next. The ones naming the thing submitted take the
// noun, "job" or "sweep".
const (
	msgInvalid  = "the submission is invalid: fix the fields listed in problems"
	msgTooLarge = "the submission is too large"
	msgInternal = "internal error in the intake; the details are in its log"
)

func msgUnavailable(noun string) string {
	return "the job store is unavailable, so the " + noun + " may or may not have been recorded: retry with the same idempotency_key, which never creates a second " + noun + " (a submission without one may run twice)"
}

func msgConflict(noun string) string {
	return "this idempotency_key was already used for a different submission: use a new key for a new " + noun
}

// wireError classifies err for the reply to a submission of a noun ("job"
// or "sweep"). Internal details stay in the log: the reply says only that
// something broke.
func wireError(err error, noun string, log *slog.Logger, attrs ...any) Error {
	var ve *jobs.ValidationError
	switch {
	case errors.As(err, &ve):
		if errors.Is(err, ErrTooLarge) {
			return Error{Code: CodeTooLarge, Message: msgTooLarge, Problems: ve.Problems}
		}
		return Error{Code: CodeInvalid, Message: msgInvalid, Problems: ve.Problems}
	case errors.Is(err, jobs.ErrIdempotencyConflict):
		return Error{Code: CodeConflict, Message: msgConflict(noun)}
	case errors.Is(err, jobs.ErrUnavailable),
		// A call that ran out of time may have written the job: the
		// caller's only safe move is the same as for a store outage.
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, context.Canceled):
		log.Warn("intake: job store unavailable", append(attrs, "error", err)...)
		return Error{Code: CodeUnavailable, Message: msgUnavailable(noun)}
	}
	log.Error("intake: submission failed", append(attrs, "error", err)...)
	return Error{Code: CodeInternal, Message: msgInternal}
}

// encode returns the JSON of a reply. Receipts and wire errors always
// encode; the fallback is for the impossible case and still valid JSON.
func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"error":{"code":"internal","message":"` + msgInternal + `"}}`)
	}
	return b
}

// errorReply is the status and body of a failed submission.
func errorReply(e Error) (int, []byte) {
	return e.Code.HTTPStatus(), encode(ErrorBody{Error: e})
}

// acceptedReply is the status and body of an accepted submission, whose
// receipt is r: 201 for a new job or sweep, 200 when the idempotency key
// found an existing one.
func acceptedReply(r any, duplicate bool) (int, []byte) {
	if duplicate {
		return http.StatusOK, encode(r)
	}
	return http.StatusCreated, encode(r)
}
