package intake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

type httpEnv struct {
	srv *httptest.Server
}

func startHTTP(t *testing.T, sub intake.Submitter, token string) httpEnv {
	t.Helper()
	srv := httptest.NewServer(intake.HTTPHandler(sub, token))
	t.Cleanup(srv.Close)
	return httpEnv{srv: srv}
}

func (h httpEnv) post(t *testing.T, body io.Reader, contentType, auth string) reply {
	t.Helper()
	status, data := postTo(t, h.srv, intake.SubmitPath, body, contentType, auth)
	r := decodeReply(t, data)
	r.status = status
	return r
}

// postTo posts body to path on srv and returns the status and body of the
// answer, which must be JSON whatever the status.
func postTo(t *testing.T, srv *httptest.Server, path string, body io.Reader, contentType, auth string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return resp.StatusCode, data
}

func TestHTTPSubmitStatuses(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := startHTTP(t, rec, "")
	got := h.post(t, bytes.NewReader(mustJSON(t, submission("k1"))), "application/json; charset=utf-8", "")
	if got.status != http.StatusCreated || got.receipt.JobID != "job-k1" || got.err != nil {
		t.Fatalf("new job: %+v", got)
	}
	rec.set(func(context.Context, jobs.Submission) (intake.Receipt, error) {
		return intake.Receipt{JobID: "old", Attempt: 1, State: jobs.StateQueued, Queue: "core", Duplicate: true}, nil
	})
	got = h.post(t, bytes.NewReader(mustJSON(t, submission("k1"))), "application/json", "")
	if got.status != http.StatusOK || !got.receipt.Duplicate {
		t.Fatalf("duplicate: %+v", got)
	}
}

func TestHTTPOversizeWithoutContentLength(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := startHTTP(t, rec, "")
	// A reader of unknown length makes the client send chunked, so only the
	// MaxBytesReader can stop it.
	got := h.post(t, io.MultiReader(bytes.NewReader(oversize())), "application/json", "")
	if got.status != http.StatusRequestEntityTooLarge || got.err == nil || got.err.Code != intake.CodeTooLarge {
		t.Fatalf("got %+v", got)
	}
	if n := len(rec.submissions()); n != 0 {
		t.Fatalf("the Submitter was called %d times", n)
	}
}

func TestHTTPRequiresJSON(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := startHTTP(t, rec, "")
	for _, ct := range []string{"", "application/x-www-form-urlencoded", "text/plain", "application/json;;"} {
		got := h.post(t, strings.NewReader(`{"template":"train"}`), ct, "")
		if got.status != http.StatusUnsupportedMediaType || got.err == nil || got.err.Code != intake.CodeInvalid {
			t.Errorf("Content-Type %q: %+v", ct, got)
		}
	}
	if n := len(rec.submissions()); n != 0 {
		t.Fatalf("the Submitter was called %d times", n)
	}
}

func TestHTTPTokenAuth(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := startHTTP(t, rec, "s3cret")
	body := func() io.Reader { return bytes.NewReader(mustJSON(t, submission("k"))) }
	for _, auth := range []string{"", "Bearer", "Bearer wrong", "Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "s3cret"} {
		got := h.post(t, body(), "application/json", auth)
		if got.status != http.StatusUnauthorized || got.err == nil || got.err.Code != intake.CodeUnauthorized {
			t.Errorf("Authorization %q: %+v", auth, got)
		}
	}
	if n := len(rec.submissions()); n != 0 {
		t.Fatalf("unauthorized requests reached the Submitter %d times", n)
	}
	for _, auth := range []string{"Bearer s3cret", "bearer s3cret"} {
		if got := h.post(t, body(), "application/json", auth); got.status != http.StatusCreated {
			t.Errorf("Authorization %q: %+v", auth, got)
		}
	}
	// Oversize bodies from strangers are refused as unauthorized before
	// anything is read.
	if got := h.post(t, bytes.NewReader(oversize()), "application/json", ""); got.status != http.StatusUnauthorized {
		t.Errorf("oversize without token: %+v", got)
	}

	resp, err := h.srv.Client().Post(h.srv.URL+intake.SubmitPath, "application/json", body())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
	}
}

func TestHTTPOnlyPost(t *testing.T) {
	t.Parallel()
	h := startHTTP(t, &recorder{}, "")
	resp, err := h.srv.Client().Get(h.srv.URL + intake.SubmitPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: status %d", resp.StatusCode)
	}
}

// The caller leaves once its submission is being handled: cancelling only
// then, not after a fixed time, keeps a slow machine from cancelling
// before the request reaches the handler at all.
func TestHTTPRequestContextBoundsSubmit(t *testing.T) {
	t.Parallel()
	var cancelled atomic.Bool
	entered := make(chan struct{})
	var once sync.Once
	rec := newRecorder(func(ctx context.Context, _ jobs.Submission) (intake.Receipt, error) {
		once.Do(func() { close(entered) })
		<-ctx.Done()
		cancelled.Store(true)
		return intake.Receipt{}, ctx.Err()
	})
	h := startHTTP(t, rec, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
		}
		cancel()
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL+intake.SubmitPath, bytes.NewReader(mustJSON(t, submission("k"))))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if resp, err := h.srv.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the request did not end with the caller's context")
	}
	testenv.Eventually(t, 5*time.Second, "the Submitter to see the caller leave", cancelled.Load)
}

func TestWireFormat(t *testing.T) {
	b, err := json.Marshal(intake.ErrorBody{Error: intake.Error{Code: intake.CodeInvalid, Message: "m",
		Problems: []*jobs.FieldError{{Field: "params.epochs", Message: "p"}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"error":{"code":"invalid","message":"m","problems":[{"field":"params.epochs","message":"p"}]}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(intake.Receipt{JobID: "j", Attempt: 1, State: jobs.StateQueued, Queue: "core"})
	if want := `{"job_id":"j","attempt":1,"state":"queued","queue":"core","duplicate":false}`; string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

func subjWith(prefix string) events.Subjects { return events.Subjects{Prefix: prefix} }
