package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
)

// Both clients submit sweeps the way the intake takes them.
var (
	_ intake.SweepSubmitter = (*client.NATS)(nil)
	_ intake.SweepSubmitter = (*client.HTTP)(nil)
)

// sweepRecorder is a SweepSubmitter answering the n-th call (from 0) with
// answer(n), or with a fresh receipt when answer is nil.
type sweepRecorder struct {
	stub testenv.Stub[sweep.Spec, intake.SweepReceipt]
}

// newSweepRecorder is a sweepRecorder answering with answer (nil: the default).
func newSweepRecorder(answer func(ctx context.Context, n int) (intake.SweepReceipt, error)) *sweepRecorder {
	r := &sweepRecorder{}
	if answer != nil {
		r.stub.Set(func(ctx context.Context, _ sweep.Spec, n int) (intake.SweepReceipt, error) { return answer(ctx, n) })
	}
	return r
}

func (r *sweepRecorder) SubmitSweep(ctx context.Context, s sweep.Spec) (intake.SweepReceipt, error) {
	return r.stub.Call(ctx, s, func(s sweep.Spec) intake.SweepReceipt {
		return intake.SweepReceipt{SweepID: "sweep-" + s.IdempotencyKey, Trials: 2, Queued: 1}
	})
}

func (r *sweepRecorder) specs() []sweep.Spec { return r.stub.Calls() }

func (r *sweepRecorder) keys() []string {
	var out []string
	for _, s := range r.specs() {
		out = append(out, s.IdempotencyKey)
	}
	return out
}

func sweepSpec() sweep.Spec {
	return sweep.Spec{
		Template: "train",
		Space:    sweep.Space{Grid: map[string][]json.RawMessage{"lr": {json.RawMessage("0.1"), json.RawMessage("0.01")}}},
		Fixed:    map[string]json.RawMessage{"epochs": json.RawMessage("3")},
	}
}

// sweepTransports runs f against both clients, each with its own intake
// serving jobs (jobsRec) and sweeps (rec).
func sweepTransports(t *testing.T, answer func(ctx context.Context, n int) (intake.SweepReceipt, error), f func(t *testing.T, c intake.SweepSubmitter, rec *sweepRecorder, jobsRec *recorder)) {
	t.Helper()
	t.Run("nats", func(t *testing.T) {
		t.Parallel()
		rec, jobsRec := newSweepRecorder(answer), &recorder{}
		ns := testenv.NATS(t)
		srv, err := intake.NewNATSServer(testenv.NATSConn(t, ns), jobsRec, intake.NATSOptions{Subjects: subj, Sweeps: rec, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		c := client.NewNATS(testenv.NATSConn(t, ns), subj)
		c.Options = fast
		f(t, c, rec, jobsRec)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		rec, jobsRec := newSweepRecorder(answer), &recorder{}
		mux := http.NewServeMux()
		mux.Handle("POST "+intake.SubmitPath, intake.HTTPHandler(jobsRec, ""))
		mux.Handle("POST "+intake.SweepSubmitPath, intake.SweepHTTPHandler(rec, ""))
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		c := client.NewHTTP(srv.URL, "", srv.Client())
		c.Options = fast
		f(t, c, rec, jobsRec)
	})
}

func TestSubmitSweepReturnsReceiptAndAddsAKey(t *testing.T) {
	t.Parallel()
	sweepTransports(t, nil, func(t *testing.T, c intake.SweepSubmitter, rec *sweepRecorder, jobsRec *recorder) {
		r, err := c.SubmitSweep(ctxT(t), sweepSpec())
		if err != nil {
			t.Fatal(err)
		}
		specs := rec.specs()
		if len(specs) != 1 || !strings.HasPrefix(specs[0].IdempotencyKey, "auto-") {
			t.Fatalf("the SweepSubmitter got %+v", specs)
		}
		want := sweepSpec()
		want.IdempotencyKey = specs[0].IdempotencyKey
		if !reflect.DeepEqual(specs[0], want) {
			t.Fatalf("the SweepSubmitter got %+v, want %+v", specs[0], want)
		}
		if r != (intake.SweepReceipt{SweepID: "sweep-" + want.IdempotencyKey, Trials: 2, Queued: 1}) {
			t.Fatalf("receipt %+v", r)
		}

		s := sweepSpec()
		s.IdempotencyKey = "mine"
		if _, err := c.SubmitSweep(ctxT(t), s); err != nil {
			t.Fatal(err)
		}
		if _, err := c.SubmitSweep(ctxT(t), sweepSpec()); err != nil {
			t.Fatal(err)
		}
		keys := rec.keys()
		if keys[1] != "mine" || keys[2] == keys[0] || !strings.HasPrefix(keys[2], "auto-") {
			t.Fatalf("keys %v: want the given key kept and a new one per sweep", keys)
		}
		if n := len(jobsRec.submissions()); n != 0 {
			t.Fatalf("sweeps reached the job Submitter %d times", n)
		}
	})
}

func TestSubmitSweepRetriesUnavailableWithTheSameKey(t *testing.T) {
	t.Parallel()
	answer := func(_ context.Context, n int) (intake.SweepReceipt, error) {
		if n < 2 {
			return intake.SweepReceipt{}, fmt.Errorf("redis: %w", jobs.ErrUnavailable)
		}
		return intake.SweepReceipt{SweepID: "s1", Trials: 4, Queued: 4}, nil
	}
	sweepTransports(t, answer, func(t *testing.T, c intake.SweepSubmitter, rec *sweepRecorder, _ *recorder) {
		r, err := c.SubmitSweep(ctxT(t), sweepSpec())
		if err != nil || r.SweepID != "s1" {
			t.Fatalf("got %+v, %v", r, err)
		}
		keys := rec.keys()
		if len(keys) != 3 || keys[0] == "" || keys[0] != keys[1] || keys[1] != keys[2] {
			t.Fatalf("keys %v: want 3 tries with one key", keys)
		}
	})
}

func TestSubmitSweepGivesUpAfterRetries(t *testing.T) {
	t.Parallel()
	answer := func(context.Context, int) (intake.SweepReceipt, error) {
		return intake.SweepReceipt{}, jobs.ErrUnavailable
	}
	sweepTransports(t, answer, func(t *testing.T, c intake.SweepSubmitter, rec *sweepRecorder, _ *recorder) {
		_, err := c.SubmitSweep(ctxT(t), sweepSpec())
		if !errors.Is(err, jobs.ErrUnavailable) || !strings.Contains(err.Error(), "after 4 tries") ||
			!strings.Contains(err.Error(), "client.SubmitSweep") || !strings.Contains(err.Error(), "to find the sweep") {
			t.Fatalf("error %v", err)
		}
		if n := len(rec.specs()); n != 4 {
			t.Fatalf("%d tries, want 1 + 3 retries", n)
		}
	})
}

func TestSubmitSweepDoesNotRetryFinalAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		code intake.Code
		is   error
	}{
		{"conflict", jobs.ErrIdempotencyConflict, intake.CodeConflict, jobs.ErrIdempotencyConflict},
		{"invalid", &jobs.ValidationError{Problems: []*jobs.FieldError{{Field: "space.grid.lr", Message: "empty"}}}, intake.CodeInvalid, nil},
		{"internal", errors.New("boom"), intake.CodeInternal, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answer := func(context.Context, int) (intake.SweepReceipt, error) { return intake.SweepReceipt{}, tc.err }
			sweepTransports(t, answer, func(t *testing.T, c intake.SweepSubmitter, rec *sweepRecorder, _ *recorder) {
				_, err := c.SubmitSweep(ctxT(t), sweepSpec())
				var ce *client.Error
				if !errors.As(err, &ce) || ce.Code != tc.code {
					t.Fatalf("error %v, want code %s", err, tc.code)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
				}
				if n := len(rec.specs()); n != 1 {
					t.Fatalf("%d tries, want 1", n)
				}
			})
		})
	}
}

func TestSubmitSweepWithoutIntakeOverNATS(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, nc *nats.Conn) {
		c := client.NewNATS(nc, subj)
		c.Options = client.Options{Retries: 1, Backoff: time.Millisecond}
		_, err := c.SubmitSweep(ctxT(t), sweepSpec())
		if !errors.Is(err, client.ErrNoIntake) || !errors.Is(err, nats.ErrNoResponders) {
			t.Fatalf("error %v", err)
		}
		if !strings.Contains(err.Error(), "ballast controller") || !strings.Contains(err.Error(), subj.SweepSubmit()) ||
			!strings.Contains(err.Error(), "after 2 tries") {
			t.Fatalf("error %q does not say what to start, where, or how often it tried", err)
		}
	}
	t.Run("nothing running", func(t *testing.T) {
		t.Parallel()
		check(t, noIntake(t))
	})
	t.Run("intake without sweeps", func(t *testing.T) {
		t.Parallel()
		ns := testenv.NATS(t)
		srv, err := intake.NewNATSServer(testenv.NATSConn(t, ns), &recorder{}, intake.NATSOptions{Subjects: subj})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		check(t, testenv.NATSConn(t, ns))
	})
}

func TestSubmitSweepSizeLimit(t *testing.T) {
	t.Parallel()
	sweepTransports(t, nil, func(t *testing.T, c intake.SweepSubmitter, rec *sweepRecorder, _ *recorder) {
		s := sweepSpec()
		s.Labels = map[string]string{"pad": strings.Repeat("x", sweep.MaxSpecBytes)}
		_, err := c.SubmitSweep(ctxT(t), s)
		var ve *jobs.ValidationError
		if !errors.Is(err, intake.ErrTooLarge) || !errors.As(err, &ve) || ve.Problems[0].Field != "body" {
			t.Fatalf("error %v", err)
		}
		if n := len(rec.specs()); n != 0 {
			t.Fatalf("the intake was called %d times", n)
		}
		// Over a job's limit is still within a sweep's.
		s.Labels = map[string]string{"pad": strings.Repeat("x", jobs.MaxSubmissionBytes)}
		if _, err := c.SubmitSweep(ctxT(t), s); err != nil {
			t.Fatal(err)
		}
		if n := len(rec.specs()); n != 1 {
			t.Fatalf("the intake was called %d times", n)
		}
	})
}

func TestSubmitSweepHTTPToken(t *testing.T) {
	t.Parallel()
	rec := &sweepRecorder{}
	srv := httptest.NewServer(intake.SweepHTTPHandler(rec, "s3cret"))
	t.Cleanup(srv.Close)
	if _, err := client.NewHTTP(srv.URL, "s3cret", srv.Client()).SubmitSweep(ctxT(t), sweepSpec()); err != nil {
		t.Fatal(err)
	}
	_, err := client.NewHTTP(srv.URL, "nope", srv.Client()).SubmitSweep(ctxT(t), sweepSpec())
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != intake.CodeUnauthorized || ce.Status != http.StatusUnauthorized {
		t.Fatalf("error %v", err)
	}
	if n := len(rec.specs()); n != 1 {
		t.Fatalf("the SweepSubmitter was called %d times, want 1 (no retry when unauthorized)", n)
	}
}

// A reply that is not a sweep receipt, such as a job's from a server that
// routes the path wrongly, is not taken for one.
func TestSubmitSweepRefusesAJobReceipt(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"job_id":"j1","attempt":1,"state":"queued","queue":"core","duplicate":false}`))
	}))
	t.Cleanup(srv.Close)
	c := client.NewHTTP(srv.URL, "", srv.Client())
	c.Options = client.Options{Retries: -1}
	r, err := c.SubmitSweep(ctxT(t), sweepSpec())
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != intake.CodeInternal {
		t.Fatalf("got %+v, error %v", r, err)
	}
}
