package intake_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

type errorCase struct {
	name      string
	body      []byte
	do        func(ctx context.Context, s jobs.Submission) (intake.Receipt, error)
	code      intake.Code
	status    int
	field     string // first problem's field, if any
	message   string // part of the message
	submitted bool   // whether the Submitter is reached
	logged    string // part of the server's log, if any
}

// errorCases are the error paths both transports must answer alike.
func errorCases(t *testing.T) []errorCase {
	fail := func(err error) func(context.Context, jobs.Submission) (intake.Receipt, error) {
		return func(context.Context, jobs.Submission) (intake.Receipt, error) { return intake.Receipt{}, err }
	}
	good := mustJSON(t, submission("k1"))
	return []errorCase{
		{
			name: "validation", body: good, code: intake.CodeInvalid, status: 400, field: "params.epochs", message: "fix the fields", submitted: true,
			do: fail(&jobs.ValidationError{Problems: []*jobs.FieldError{{Field: "params.epochs", Message: "must be at least 1"}}}),
		},
		{name: "malformed JSON", body: []byte(`{"template":`), code: intake.CodeInvalid, status: 400, field: "body"},
		{name: "unknown field", body: []byte(`{"template":"train","bogus":1}`), code: intake.CodeInvalid, status: 400, field: "bogus"},
		{name: "two objects", body: []byte(`{"template":"a"}{"template":"b"}`), code: intake.CodeInvalid, status: 400, field: "body"},
		{name: "empty", body: []byte{}, code: intake.CodeInvalid, status: 400, field: "body"},
		{name: "oversize", body: oversize(), code: intake.CodeTooLarge, status: 413, field: "body", message: "too large"},
		{
			name: "unavailable", body: good, code: intake.CodeUnavailable, status: 503, message: "retry with the same idempotency_key", submitted: true,
			do: fail(fmt.Errorf("store.Submit: %w: dial tcp: refused", jobs.ErrUnavailable)),
		},
		{
			name: "submit timeout", body: good, code: intake.CodeUnavailable, status: 503, message: "retry with the same idempotency_key", submitted: true,
			do: func(ctx context.Context, _ jobs.Submission) (intake.Receipt, error) {
				<-ctx.Done() // the intake's timeout, set short in these tests
				return intake.Receipt{}, ctx.Err()
			},
		},
		{
			name: "conflict", body: good, code: intake.CodeConflict, status: 409, message: "new key", submitted: true,
			do: fail(fmt.Errorf("store.Submit: %w", jobs.ErrIdempotencyConflict)),
		},
		{
			name: "internal", body: good, code: intake.CodeInternal, status: 500, message: "in its log", submitted: true, logged: "secret detail: redis",
			do: fail(errors.New("secret detail: redis password wrong")),
		},
		{
			name: "empty receipt", body: good, code: intake.CodeInternal, status: 500, message: "in its log", submitted: true, logged: "neither a job ID",
			do: func(context.Context, jobs.Submission) (intake.Receipt, error) { return intake.Receipt{}, nil },
		},
		{
			name: "panic", body: good, code: intake.CodeInternal, status: 500, message: "in its log", submitted: true, logged: "secret detail: nil map",
			do: func(context.Context, jobs.Submission) (intake.Receipt, error) { panic("secret detail: nil map") },
		},
	}
}

func checkErrorReply(t *testing.T, tc errorCase, got reply, rec *recorder) {
	t.Helper()
	checkWireError(t, got.err, got.receipt, tc.code, tc.message, tc.field, len(rec.submissions()), tc.submitted)
}

// checkWireError checks an error reply, for jobs and sweeps alike: its
// code, that its message says what to do without leaking internals, the
// field of its first problem, and whether the submitter was reached.
func checkWireError(t *testing.T, e *intake.Error, receipt any, code intake.Code, message, field string, calls int, submitted bool) {
	t.Helper()
	if e == nil {
		t.Fatalf("got receipt %+v, want error %s", receipt, code)
	}
	if e.Code != code {
		t.Errorf("code %q, want %q (%s)", e.Code, code, e.Message)
	}
	if !strings.Contains(e.Message, message) {
		t.Errorf("message %q does not contain %q", e.Message, message)
	}
	if strings.Contains(e.Message, "secret") {
		t.Errorf("message leaks internal details: %q", e.Message)
	}
	switch {
	case field == "" && len(e.Problems) > 0:
		t.Errorf("unexpected problems %v", e.Problems)
	case field != "" && (len(e.Problems) == 0 || e.Problems[0].Field != field):
		t.Errorf("problems %v, want one on %q", e.Problems, field)
	}
	if (calls > 0) != submitted {
		t.Errorf("the submitter was called %d times, want called=%v", calls, submitted)
	}
}

func TestNATSErrorReplies(t *testing.T) {
	t.Parallel()
	for _, tc := range errorCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder(tc.do)
			e := startNATS(t, rec, intake.NATSOptions{Timeout: 100 * time.Millisecond})
			checkErrorReply(t, tc, e.request(t, tc.body), rec)
			if !strings.Contains(e.log.String(), tc.logged) {
				t.Errorf("%q not logged; log:\n%s", tc.logged, e.log)
			}
			// The server survives every error, panics included.
			rec.set(nil)
			if r := e.request(t, mustJSON(t, submission("after"))); r.err != nil {
				t.Fatalf("after %s: %+v", tc.name, r.err)
			}
		})
	}
}

func TestHTTPErrorReplies(t *testing.T) {
	t.Parallel()
	for _, tc := range errorCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.name == "submit timeout" {
				t.Skip("the HTTP handler uses DefaultTimeout; the client's deadline is covered in TestHTTPRequestContextBoundsSubmit")
			}
			rec := newRecorder(tc.do)
			h := startHTTP(t, rec, "")
			got := h.post(t, bytes.NewReader(tc.body), "application/json", "")
			if got.status != tc.status {
				t.Errorf("status %d, want %d", got.status, tc.status)
			}
			checkErrorReply(t, tc, got, rec)
			if got.status != http.StatusServiceUnavailable && got.err.Code == intake.CodeUnavailable {
				t.Error("unavailable without 503")
			}
		})
	}
}
