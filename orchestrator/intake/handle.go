package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/ballastdev/ballast/jobs"
)

// DefaultTimeout bounds one Submit call.
const DefaultTimeout = 10 * time.Second

// handler is the part shared by both transports: from raw bytes to a reply.
type handler struct {
	sub     Submitter
	timeout time.Duration
	log     *slog.Logger
}

// handle never panics and always returns a reply: a bad message or a broken
// Submitter must cost one request, not the server.
func (h *handler) handle(ctx context.Context, data []byte, attrs ...any) (status int, body []byte) {
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("intake: panic while handling a submission",
				append(attrs, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))...)
			status, body = errorReply(Error{Code: CodeInternal, Message: msgInternal})
		}
	}()
	// Checked before parsing so that an oversize message costs no decoding.
	if len(data) > jobs.MaxSubmissionBytes {
		return errorReply(wireError(tooLarge(len(data)), h.log, attrs...))
	}
	s, err := jobs.DecodeSubmission(data)
	if err != nil {
		return errorReply(wireError(err, h.log, attrs...))
	}
	attrs = append(attrs, "template", s.Template, "idempotency_key", s.IdempotencyKey)
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	r, err := h.sub.Submit(ctx, s)
	if err == nil && r.JobID == "" {
		// A receipt without a job ID would tell the caller nothing it can use.
		err = errors.New("intake: the Submitter returned neither a job ID nor an error")
	}
	if err != nil {
		return errorReply(wireError(err, h.log, attrs...))
	}
	return receiptReply(r)
}
