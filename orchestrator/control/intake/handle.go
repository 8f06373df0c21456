package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// DefaultTimeout bounds one Submit or SubmitSweep call.
const DefaultTimeout = 10 * time.Second

// endpoint is one kind of submission as the transports see it: NATSServer
// and the HTTP handlers serve jobs and sweeps through it alike.
type endpoint interface {
	// handle turns the body of one request into a reply.
	handle(ctx context.Context, data []byte, attrs ...any) (status int, body []byte)
	// limit is the largest body accepted, in bytes.
	limit() int
	// refuseTooLarge is the reply to a body of n bytes over the limit; n < 0
	// means the size is unknown because reading stopped at the limit.
	refuseTooLarge(n int) (status int, body []byte)
}

// handler is the decode→call→reply skeleton shared by jobs and sweeps: S is
// the decoded request, R the receipt its Submitter returns.
type handler[S, R any] struct {
	noun    string // "job" or "sweep": names the thing in replies and logs
	max     int    // body limit in bytes
	hint    string // how to get under max, for the too_large reply
	decode  func([]byte) (S, error)
	logged  func(S) []any // log attributes identifying a request
	call    func(context.Context, S) (R, error)
	timeout time.Duration
	log     *slog.Logger
	// accepted reports whether r answers a duplicate, or an error when r is
	// unusable: a receipt without an ID would tell the caller nothing.
	accepted func(R) (duplicate bool, err error)
}

// jobHandler serves jobs.Submission on PREFIX.jobs.submit and SubmitPath.
func jobHandler(sub Submitter, timeout time.Duration, log *slog.Logger) *handler[jobs.Submission, Receipt] {
	return &handler[jobs.Submission, Receipt]{
		noun:   "job",
		max:    jobs.MaxSubmissionBytes,
		hint:   "send large inputs by reference, e.g. a path or URL parameter",
		decode: jobs.DecodeSubmission,
		logged: func(s jobs.Submission) []any {
			return []any{"template", s.Template, "idempotency_key", s.IdempotencyKey}
		},
		// A closure, not the method value sub.Submit, which would panic here
		// on a nil Submitter instead of answering "internal" per request.
		call:    func(ctx context.Context, s jobs.Submission) (Receipt, error) { return sub.Submit(ctx, s) },
		timeout: timeout,
		log:     log,
		accepted: func(r Receipt) (bool, error) {
			if r.JobID == "" {
				return false, errors.New("intake: the Submitter returned neither a job ID nor an error")
			}
			return r.Duplicate, nil
		},
	}
}

func (h *handler[S, R]) limit() int { return h.max }

func (h *handler[S, R]) refuseTooLarge(n int) (int, []byte) {
	return errorReply(Error{
		Code:     CodeTooLarge,
		Message:  fmt.Sprintf("%s (the limit is %d bytes)", msgTooLarge, h.max),
		Problems: tooLarge(n, h.max, h.hint).Problems,
	})
}

// handle never panics and always returns a reply: a bad message or a broken
// Submitter must cost one request, not the server.
func (h *handler[S, R]) handle(ctx context.Context, data []byte, attrs ...any) (status int, body []byte) {
	attrs = append(attrs, "kind", h.noun)
	defer replyOnPanic(h.log, "handling a submission", &attrs, &status, &body)
	// Checked before parsing so that an oversize message costs no decoding.
	if len(data) > h.max {
		return h.refuseTooLarge(len(data))
	}
	s, err := h.decode(data)
	if err != nil {
		return errorReply(wireError(err, h.noun, h.log, attrs...))
	}
	attrs = append(attrs, h.logged(s)...)
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	r, err := h.call(ctx, s)
	var dup bool
	if err == nil {
		dup, err = h.accepted(r)
	}
	if err != nil {
		return errorReply(wireError(err, h.noun, h.log, attrs...))
	}
	return acceptedReply(r, dup)
}

// replyOnPanic, deferred by a handler, turns a panic into an internal
// error reply and logs it with the stack: a bad message or a broken
// Submitter must cost one request, not the server. attrs is read at the
// panic, so what the handler learnt of the request by then is logged.
func replyOnPanic(log *slog.Logger, doing string, attrs *[]any, status *int, body *[]byte) {
	if p := recover(); p != nil {
		log.Error("intake: panic while "+doing, append(*attrs, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))...)
		*status, *body = errorReply(Error{Code: CodeInternal, Message: msgInternal})
	}
}
