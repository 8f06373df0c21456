package intake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
)

// sweepRecorder is a SweepSubmitter that records what it was given and
// answers with the function given to set, or with a fresh receipt.
type sweepRecorder struct {
	stub testenv.Stub[sweep.Spec, intake.SweepReceipt]
}

func (r *sweepRecorder) SubmitSweep(ctx context.Context, s sweep.Spec) (intake.SweepReceipt, error) {
	return r.stub.Call(ctx, s, func(s sweep.Spec) intake.SweepReceipt {
		return intake.SweepReceipt{SweepID: "sweep-" + s.IdempotencyKey, Trials: 2, Queued: 1}
	})
}

// newSweepRecorder is a sweepRecorder answering with do (nil: the default).
func newSweepRecorder(do func(ctx context.Context, s sweep.Spec) (intake.SweepReceipt, error)) *sweepRecorder {
	r := &sweepRecorder{}
	r.set(do)
	return r
}

func (r *sweepRecorder) set(do func(ctx context.Context, s sweep.Spec) (intake.SweepReceipt, error)) {
	if do == nil {
		r.stub.Set(nil) // back to the default
		return
	}
	r.stub.Set(func(ctx context.Context, s sweep.Spec, _ int) (intake.SweepReceipt, error) { return do(ctx, s) })
}

func (r *sweepRecorder) specs() []sweep.Spec { return r.stub.Calls() }

// SubmitSweep lets a gate hold sweeps as it holds jobs.
func (g *gate) SubmitSweep(ctx context.Context, s sweep.Spec) (intake.SweepReceipt, error) {
	r, err := g.Submit(ctx, jobs.Submission{IdempotencyKey: s.IdempotencyKey})
	if err != nil {
		return intake.SweepReceipt{}, err
	}
	return intake.SweepReceipt{SweepID: "sweep-" + strings.TrimPrefix(r.JobID, "job-"), Trials: 1, Queued: 1}, nil
}

func spec(key string) sweep.Spec {
	return sweep.Spec{
		Template:       "train",
		Space:          sweep.Space{Grid: map[string][]json.RawMessage{"lr": {json.RawMessage("0.1"), json.RawMessage("0.01")}}},
		MaxParallel:    1,
		Fixed:          map[string]json.RawMessage{"epochs": json.RawMessage("3")},
		IdempotencyKey: key,
	}
}

// paddedSpec is a sweep body of at least n bytes.
func paddedSpec(n int) []byte {
	return []byte(`{"template":"train","space":{"grid":{"lr":[0.1]}},"labels":{"pad":"` + strings.Repeat("x", n) + `"}}`)
}

// sweepReply is either a sweep receipt or a wire error.
type sweepReply struct {
	status  int // HTTP only
	receipt intake.SweepReceipt
	err     *intake.Error
}

func decodeSweepReply(t *testing.T, data []byte) sweepReply {
	t.Helper()
	var probe struct {
		Error *intake.Error `json:"error"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		t.Fatalf("reply is not JSON: %v: %q", err, data)
	}
	if probe.Error != nil {
		return sweepReply{err: probe.Error}
	}
	var r sweepReply
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a job Receipt must not pass for a sweep's
	if err := dec.Decode(&r.receipt); err != nil {
		t.Fatalf("reply is not a sweep receipt: %v: %q", err, data)
	}
	return r
}

func (e natsEnv) requestSweep(t *testing.T, data []byte) sweepReply {
	t.Helper()
	m, err := e.client.Request(subj.SweepSubmit(), data, 10*time.Second)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	return decodeSweepReply(t, m.Data)
}

func TestNATSSweepSubmitReturnsReceipt(t *testing.T) {
	t.Parallel()
	jobsRec, sweeps := &recorder{}, &sweepRecorder{}
	e := startNATS(t, jobsRec, intake.NATSOptions{Sweeps: sweeps})
	got := e.requestSweep(t, mustJSON(t, spec("s1")))
	want := intake.SweepReceipt{SweepID: "sweep-s1", Trials: 2, Queued: 1}
	if got.err != nil || got.receipt != want {
		t.Fatalf("got %+v / %+v, want %+v", got.receipt, got.err, want)
	}
	if specs := sweeps.specs(); len(specs) != 1 || !reflect.DeepEqual(specs[0], spec("s1")) {
		t.Fatalf("the SweepSubmitter got %+v", specs)
	}

	sweeps.set(func(context.Context, sweep.Spec) (intake.SweepReceipt, error) {
		return intake.SweepReceipt{SweepID: "old", Trials: 2, Queued: 2, Duplicate: true}, nil
	})
	if got := e.requestSweep(t, mustJSON(t, spec("s1"))); got.err != nil || !got.receipt.Duplicate || got.receipt.SweepID != "old" {
		t.Fatalf("duplicate: got %+v / %+v", got.receipt, got.err)
	}

	// Each subject reaches its own submitter.
	if r := e.request(t, mustJSON(t, submission("j1"))); r.err != nil || r.receipt.JobID != "job-j1" {
		t.Fatalf("job: got %+v / %+v", r.receipt, r.err)
	}
	if subs, specs := jobsRec.submissions(), sweeps.specs(); len(subs) != 1 || len(specs) != 2 {
		t.Fatalf("the Submitter got %d submissions and the SweepSubmitter %d sweeps, want 1 and 2", len(subs), len(specs))
	}
}

func TestNATSSweepsOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	e := startNATS(t, &recorder{}, intake.NATSOptions{})
	_, err := e.client.Request(subj.SweepSubmit(), mustJSON(t, spec("s")), 5*time.Second)
	if !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("sweep request to an intake without Sweeps: %v, want no responders", err)
	}
	if r := e.request(t, mustJSON(t, submission("j"))); r.err != nil {
		t.Fatal(r.err)
	}
}

// A sweep may be larger than a job: the limit is the sweep's on both
// transports.
func TestSweepSizeLimitIsTheSweeps(t *testing.T) {
	t.Parallel()
	body := paddedSpec(jobs.MaxSubmissionBytes + 1)
	if len(body) > sweep.MaxSpecBytes {
		t.Fatal("test body over the sweep limit")
	}
	t.Run("nats", func(t *testing.T) {
		t.Parallel()
		sweeps := &sweepRecorder{}
		e := startNATS(t, &recorder{}, intake.NATSOptions{Sweeps: sweeps})
		if r := e.requestSweep(t, body); r.err != nil {
			t.Fatalf("sweep of %d bytes: %+v", len(body), r.err)
		}
		if n := len(sweeps.specs()); n != 1 {
			t.Fatalf("the SweepSubmitter was called %d times", n)
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		sweeps := &sweepRecorder{}
		h := startSweepHTTP(t, sweeps, "")
		if r := h.post(t, bytes.NewReader(body), "application/json", ""); r.status != http.StatusCreated {
			t.Fatalf("sweep of %d bytes: %+v", len(body), r)
		}
		if n := len(sweeps.specs()); n != 1 {
			t.Fatalf("the SweepSubmitter was called %d times", n)
		}
	})
}

type sweepErrorCase struct {
	name      string
	body      []byte
	do        func(ctx context.Context, s sweep.Spec) (intake.SweepReceipt, error)
	code      intake.Code
	status    int
	field     string // first problem's field, if any
	message   string // part of the message
	submitted bool   // whether the SweepSubmitter is reached
	logged    string // part of the server's log, if any
}

// sweepErrorCases are the error paths both transports must answer alike.
func sweepErrorCases(t *testing.T) []sweepErrorCase {
	fail := func(err error) func(context.Context, sweep.Spec) (intake.SweepReceipt, error) {
		return func(context.Context, sweep.Spec) (intake.SweepReceipt, error) { return intake.SweepReceipt{}, err }
	}
	good := mustJSON(t, spec("s1"))
	limit := strconv.Itoa(sweep.MaxSpecBytes)
	return []sweepErrorCase{
		{
			name: "validation", body: good, code: intake.CodeInvalid, status: 400, field: "space.grid.lr", message: "fix the fields", submitted: true,
			do: fail(&jobs.ValidationError{Problems: []*jobs.FieldError{{Field: "space.grid.lr", Message: "lr is fixed"}}}),
		},
		{name: "malformed JSON", body: []byte(`{"template":`), code: intake.CodeInvalid, status: 400, field: "body"},
		{name: "unknown field", body: []byte(`{"template":"train","bogus":1}`), code: intake.CodeInvalid, status: 400, field: "bogus"},
		{name: "job submission", body: mustJSON(t, submission("k")), code: intake.CodeInvalid, status: 400, field: "params"},
		{name: "oversize", body: paddedSpec(sweep.MaxSpecBytes), code: intake.CodeTooLarge, status: 413, field: "body", message: limit},
		{
			name: "unavailable", body: good, code: intake.CodeUnavailable, status: 503, message: "retry with the same idempotency_key, which never creates a second sweep", submitted: true,
			do: fail(fmt.Errorf("store.SubmitSweep: %w: dial tcp: refused", jobs.ErrUnavailable)),
		},
		{
			name: "submit timeout", body: good, code: intake.CodeUnavailable, status: 503, message: "retry with the same idempotency_key", submitted: true,
			do: func(ctx context.Context, _ sweep.Spec) (intake.SweepReceipt, error) {
				<-ctx.Done() // the intake's timeout, set short in these tests
				return intake.SweepReceipt{}, ctx.Err()
			},
		},
		{
			name: "conflict", body: good, code: intake.CodeConflict, status: 409, message: "new key for a new sweep", submitted: true,
			do: fail(fmt.Errorf("store.SubmitSweep: %w", jobs.ErrIdempotencyConflict)),
		},
		{
			name: "internal", body: good, code: intake.CodeInternal, status: 500, message: "in its log", submitted: true, logged: "secret detail: redis",
			do: fail(errors.New("secret detail: redis password wrong")),
		},
		{
			name: "empty receipt", body: good, code: intake.CodeInternal, status: 500, message: "in its log", submitted: true, logged: "neither a sweep ID",
			do: func(context.Context, sweep.Spec) (intake.SweepReceipt, error) {
				return intake.SweepReceipt{Trials: 2}, nil
			},
		},
		{
			name: "panic", body: good, code: intake.CodeInternal, status: 500, message: "in its log", submitted: true, logged: "secret detail: nil map",
			do: func(context.Context, sweep.Spec) (intake.SweepReceipt, error) { panic("secret detail: nil map") },
		},
	}
}

func checkSweepErrorReply(t *testing.T, tc sweepErrorCase, got sweepReply, sweeps *sweepRecorder) {
	t.Helper()
	checkWireError(t, got.err, got.receipt, tc.code, tc.message, tc.field, len(sweeps.specs()), tc.submitted)
}

func TestNATSSweepErrorReplies(t *testing.T) {
	t.Parallel()
	for _, tc := range sweepErrorCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			jobsRec, sweeps := &recorder{}, newSweepRecorder(tc.do)
			e := startNATS(t, jobsRec, intake.NATSOptions{Sweeps: sweeps, Timeout: 100 * time.Millisecond})
			checkSweepErrorReply(t, tc, e.requestSweep(t, tc.body), sweeps)
			if !strings.Contains(e.log.String(), tc.logged) {
				t.Errorf("%q not logged; log:\n%s", tc.logged, e.log)
			}
			if n := len(jobsRec.submissions()); n != 0 {
				t.Errorf("a sweep reached the job Submitter %d times", n)
			}
			// The server survives every error, panics included.
			sweeps.set(nil)
			if r := e.requestSweep(t, mustJSON(t, spec("after"))); r.err != nil {
				t.Fatalf("after %s: %+v", tc.name, r.err)
			}
		})
	}
}

func TestHTTPSweepErrorReplies(t *testing.T) {
	t.Parallel()
	for _, tc := range sweepErrorCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.name == "submit timeout" {
				t.Skip("the HTTP handler uses DefaultTimeout")
			}
			sweeps := newSweepRecorder(tc.do)
			h := startSweepHTTP(t, sweeps, "")
			got := h.post(t, bytes.NewReader(tc.body), "application/json", "")
			if got.status != tc.status {
				t.Errorf("status %d, want %d", got.status, tc.status)
			}
			checkSweepErrorReply(t, tc, got, sweeps)
		})
	}
}

func TestNATSSweepDroppedWithoutReplySubject(t *testing.T) {
	t.Parallel()
	sweeps := &sweepRecorder{}
	e := startNATS(t, &recorder{}, intake.NATSOptions{Sweeps: sweeps})
	if err := e.client.Publish(subj.SweepSubmit(), mustJSON(t, spec("fire-and-forget"))); err != nil {
		t.Fatal(err)
	}
	// One subscription handles one connection's messages in order, so the
	// answer to this request means the publish was seen first.
	if r := e.requestSweep(t, mustJSON(t, spec("asked"))); r.err != nil {
		t.Fatal(r.err)
	}
	if specs := sweeps.specs(); len(specs) != 1 || specs[0].IdempotencyKey != "asked" {
		t.Fatalf("the SweepSubmitter got %+v, want only the request", specs)
	}
	if !strings.Contains(e.log.String(), "without a reply subject") {
		t.Fatalf("the drop was not logged; log:\n%s", e.log)
	}
}

func TestNATSSweepsShareTheInFlightLimit(t *testing.T) {
	t.Parallel()
	g := newGate()
	sweeps := &sweepRecorder{}
	e := startNATS(t, g, intake.NATSOptions{Sweeps: sweeps, MaxInFlight: 1, Timeout: 20 * time.Second})
	t.Cleanup(g.open)
	wait := requestAsync(t, e.client, 1)
	testenv.Eventually(t, 5*time.Second, "the job to be in flight", func() bool { return g.inflight.Load() == 1 })
	// The only slot is the job's, so the sweep waits; with a limit per
	// subject it would be answered at once.
	if _, err := e.client.Request(subj.SweepSubmit(), mustJSON(t, spec("waits")), 300*time.Millisecond); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("sweep while the slot is taken: %v, want a timeout", err)
	}
	if n := len(sweeps.specs()); n != 0 {
		t.Fatalf("the SweepSubmitter ran %d times while the slot was taken", n)
	}
	g.open()
	for _, m := range wait() {
		if r := decodeReply(t, m.Data); r.err != nil {
			t.Fatal(r.err)
		}
	}
	if r := e.requestSweep(t, mustJSON(t, spec("after"))); r.err != nil {
		t.Fatal(r.err)
	}
}

func TestNATSStopDrainsSweeps(t *testing.T) {
	t.Parallel()
	g := newGate()
	e := startNATS(t, &recorder{}, intake.NATSOptions{Sweeps: g})
	t.Cleanup(g.open)
	var wg sync.WaitGroup
	replies := make([]*nats.Msg, 2)
	errs := make([]error, 2)
	for i := range replies {
		wg.Go(func() {
			replies[i], errs[i] = e.client.Request(subj.SweepSubmit(), mustJSON(t, spec("c")), 20*time.Second)
		})
	}
	testenv.Eventually(t, 5*time.Second, "2 sweeps in flight", func() bool { return g.inflight.Load() == 2 })

	stopped := make(chan struct{})
	go func() { e.srv.Stop(); close(stopped) }()
	noResponders := func(subject string, data []byte) func() bool {
		return func() bool {
			_, err := e.client.Request(subject, data, 100*time.Millisecond)
			return errors.Is(err, nats.ErrNoResponders)
		}
	}
	testenv.Eventually(t, 5*time.Second, "the sweeps subscription to be drained", noResponders(subj.SweepSubmit(), mustJSON(t, spec("probe"))))
	testenv.Eventually(t, 5*time.Second, "the jobs subscription to be drained", noResponders(subj.Submit(), mustJSON(t, submission("probe"))))
	select {
	case <-stopped:
		t.Fatal("Stop returned with sweeps in flight")
	default:
	}
	g.open()
	wg.Wait()
	for i, m := range replies {
		if errs[i] != nil {
			t.Fatalf("request: %v", errs[i])
		}
		if r := decodeSweepReply(t, m.Data); r.err != nil || r.receipt.SweepID != "sweep-c" {
			t.Fatalf("in-flight sweep got %+v / %+v", r.receipt, r.err)
		}
	}
	<-stopped
}

type sweepHTTPEnv struct {
	srv *httptest.Server
}

func startSweepHTTP(t *testing.T, sw intake.SweepSubmitter, token string) sweepHTTPEnv {
	t.Helper()
	srv := httptest.NewServer(intake.SweepHTTPHandler(sw, token))
	t.Cleanup(srv.Close)
	return sweepHTTPEnv{srv: srv}
}

func (h sweepHTTPEnv) post(t *testing.T, body io.Reader, contentType, auth string) sweepReply {
	t.Helper()
	status, data := postTo(t, h.srv, intake.SweepSubmitPath, body, contentType, auth)
	r := decodeSweepReply(t, data)
	r.status = status
	return r
}

func TestHTTPSweepStatuses(t *testing.T) {
	t.Parallel()
	sweeps := &sweepRecorder{}
	h := startSweepHTTP(t, sweeps, "")
	got := h.post(t, bytes.NewReader(mustJSON(t, spec("s1"))), "application/json", "")
	if got.status != http.StatusCreated || got.err != nil || got.receipt != (intake.SweepReceipt{SweepID: "sweep-s1", Trials: 2, Queued: 1}) {
		t.Fatalf("new sweep: %+v", got)
	}
	if specs := sweeps.specs(); len(specs) != 1 || !reflect.DeepEqual(specs[0], spec("s1")) {
		t.Fatalf("the SweepSubmitter got %+v", specs)
	}
	sweeps.set(func(context.Context, sweep.Spec) (intake.SweepReceipt, error) {
		return intake.SweepReceipt{SweepID: "old", Trials: 2, Queued: 2, Duplicate: true}, nil
	})
	got = h.post(t, bytes.NewReader(mustJSON(t, spec("s1"))), "application/json", "")
	if got.status != http.StatusOK || !got.receipt.Duplicate {
		t.Fatalf("duplicate: %+v", got)
	}
	if got := h.post(t, strings.NewReader(`{"template":"train"}`), "text/plain", ""); got.status != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain: %+v", got)
	}
	resp, err := h.srv.Client().Get(h.srv.URL + intake.SweepSubmitPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: status %d", resp.StatusCode)
	}
	if n := len(sweeps.specs()); n != 2 {
		t.Fatalf("the SweepSubmitter was called %d times, want 2", n)
	}
}

func TestHTTPSweepOversizeWithoutContentLength(t *testing.T) {
	t.Parallel()
	sweeps := &sweepRecorder{}
	h := startSweepHTTP(t, sweeps, "")
	// A reader of unknown length makes the client send chunked, so only the
	// MaxBytesReader can stop it.
	got := h.post(t, io.MultiReader(bytes.NewReader(paddedSpec(sweep.MaxSpecBytes))), "application/json", "")
	if got.status != http.StatusRequestEntityTooLarge || got.err == nil || got.err.Code != intake.CodeTooLarge ||
		!strings.Contains(got.err.Message, strconv.Itoa(sweep.MaxSpecBytes)) {
		t.Fatalf("got %+v", got)
	}
	if n := len(sweeps.specs()); n != 0 {
		t.Fatalf("the SweepSubmitter was called %d times", n)
	}
}

func TestHTTPSweepTokenAuth(t *testing.T) {
	t.Parallel()
	sweeps := &sweepRecorder{}
	h := startSweepHTTP(t, sweeps, "s3cret")
	body := func() io.Reader { return bytes.NewReader(mustJSON(t, spec("k"))) }
	for _, auth := range []string{"", "Bearer wrong", "Basic s3cret"} {
		got := h.post(t, body(), "application/json", auth)
		if got.status != http.StatusUnauthorized || got.err == nil || got.err.Code != intake.CodeUnauthorized {
			t.Errorf("Authorization %q: %+v", auth, got)
		}
	}
	if n := len(sweeps.specs()); n != 0 {
		t.Fatalf("unauthorized requests reached the SweepSubmitter %d times", n)
	}
	if got := h.post(t, body(), "application/json", "Bearer s3cret"); got.status != http.StatusCreated {
		t.Errorf("with the token: %+v", got)
	}

	open := startSweepHTTP(t, sweeps, "")
	if got := open.post(t, body(), "application/json", ""); got.status != http.StatusCreated {
		t.Errorf("without a token configured: %+v", got)
	}
	if n := len(sweeps.specs()); n != 2 {
		t.Fatalf("the SweepSubmitter was called %d times, want 2", n)
	}
}

func TestSweepWireFormat(t *testing.T) {
	b, err := json.Marshal(intake.SweepReceipt{SweepID: "s", Trials: 12, Queued: 4})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"sweep_id":"s","trials":12,"queued":4,"duplicate":false}`; string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}
