package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestSubmitGeneratesOneKeyAndKeepsGivenOnes(t *testing.T) {
	t.Parallel()
	transports(t, nil, func(t *testing.T, c client.Submitter, rec *recorder) {
		r, err := c.Submit(ctxT(t), submission())
		if err != nil {
			t.Fatal(err)
		}
		keys := rec.keys()
		if len(keys) != 1 || !strings.HasPrefix(keys[0], "auto-") || r.JobID != "job-"+keys[0] {
			t.Fatalf("keys %v, receipt %+v", keys, r)
		}
		s := submission()
		s.IdempotencyKey = "mine"
		if _, err := c.Submit(ctxT(t), s); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Submit(ctxT(t), submission()); err != nil {
			t.Fatal(err)
		}
		keys = rec.keys()
		if keys[1] != "mine" || keys[2] == keys[0] || !strings.HasPrefix(keys[2], "auto-") {
			t.Fatalf("keys %v: want the given key kept and a new one per submission", keys)
		}
	})
}

func TestSubmitRetriesUnavailableWithTheSameKey(t *testing.T) {
	t.Parallel()
	answer := func(_ context.Context, n int) (intake.Receipt, error) {
		if n < 2 {
			return intake.Receipt{}, fmt.Errorf("redis: %w", jobs.ErrUnavailable)
		}
		return intake.Receipt{JobID: "j1", Attempt: 1, State: jobs.StateQueued, Queue: "core"}, nil
	}
	transports(t, answer, func(t *testing.T, c client.Submitter, rec *recorder) {
		r, err := c.Submit(ctxT(t), submission())
		if err != nil || r.JobID != "j1" {
			t.Fatalf("got %+v, %v", r, err)
		}
		keys := rec.keys()
		if len(keys) != 3 || keys[0] != keys[1] || keys[1] != keys[2] {
			t.Fatalf("keys %v: want 3 tries with one key", keys)
		}
	})
}

func TestSubmitGivesUpAfterRetries(t *testing.T) {
	t.Parallel()
	answer := func(context.Context, int) (intake.Receipt, error) { return intake.Receipt{}, jobs.ErrUnavailable }
	transports(t, answer, func(t *testing.T, c client.Submitter, rec *recorder) {
		_, err := c.Submit(ctxT(t), submission())
		var ce *client.Error
		if !errors.Is(err, jobs.ErrUnavailable) || !errors.As(err, &ce) || ce.Code != intake.CodeUnavailable {
			t.Fatalf("error %v", err)
		}
		if !strings.Contains(err.Error(), "after 4 tries") {
			t.Errorf("error %q does not count the tries", err)
		}
		if n := len(rec.submissions()); n != 4 {
			t.Fatalf("%d tries, want 1 + 3 retries", n)
		}
	})
}

func TestSubmitDoesNotRetryFinalAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		code intake.Code
		is   error
	}{
		{"invalid", &jobs.ValidationError{Problems: []*jobs.FieldError{{Field: "params.epochs", Message: "too big"}}}, intake.CodeInvalid, nil},
		{"conflict", jobs.ErrIdempotencyConflict, intake.CodeConflict, jobs.ErrIdempotencyConflict},
		{"internal", errors.New("boom"), intake.CodeInternal, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answer := func(context.Context, int) (intake.Receipt, error) { return intake.Receipt{}, tc.err }
			transports(t, answer, func(t *testing.T, c client.Submitter, rec *recorder) {
				_, err := c.Submit(ctxT(t), submission())
				var ce *client.Error
				if !errors.As(err, &ce) || ce.Code != tc.code {
					t.Fatalf("error %v, want code %s", err, tc.code)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
				}
				if errors.Is(err, jobs.ErrUnavailable) {
					t.Errorf("%s is reported as unavailable", tc.code)
				}
				if n := len(rec.submissions()); n != 1 {
					t.Fatalf("%d tries, want 1", n)
				}
			})
		})
	}
}

func TestSubmitValidationErrorsAs(t *testing.T) {
	t.Parallel()
	answer := func(context.Context, int) (intake.Receipt, error) {
		return intake.Receipt{}, &jobs.ValidationError{Problems: []*jobs.FieldError{{Field: "params.epochs", Message: "too big"}, {Field: "team", Message: "bad"}}}
	}
	transports(t, answer, func(t *testing.T, c client.Submitter, _ *recorder) {
		_, err := c.Submit(ctxT(t), submission())
		var ve *jobs.ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) != 2 || ve.Problems[0].Field != "params.epochs" || ve.Problems[1].Field != "team" {
			t.Fatalf("error %v, validation error %+v", err, ve)
		}
		if !strings.Contains(err.Error(), "params.epochs: too big") {
			t.Errorf("error text %q does not name the field", err)
		}
	})
}

func TestSubmitRetriesTimeouts(t *testing.T) {
	t.Parallel()
	// The first try outlives the client's patience; it is released when
	// the test is done with it.
	slowFirst := func(release <-chan struct{}) func(context.Context, int) (intake.Receipt, error) {
		return func(ctx context.Context, n int) (intake.Receipt, error) {
			if n == 0 {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return intake.Receipt{}, jobs.ErrUnavailable
			}
			return intake.Receipt{JobID: "j1", Attempt: 1, State: jobs.StateQueued, Queue: "core"}, nil
		}
	}
	check := func(t *testing.T, c client.Submitter, rec *recorder, release chan struct{}) {
		r, err := c.Submit(ctxT(t), submission())
		close(release)
		if err != nil || r.JobID != "j1" {
			t.Fatalf("got %+v, %v", r, err)
		}
		keys := rec.keys()
		if len(keys) != 2 || keys[0] != keys[1] {
			t.Fatalf("keys %v: want 2 tries with one key", keys)
		}
	}
	t.Run("nats", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		rec := newRecorder(slowFirst(release))
		c := natsClient(t, rec)
		c.Options.Timeout = 100 * time.Millisecond
		check(t, c, rec, release)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		rec := newRecorder(slowFirst(release))
		c := httpClient(t, rec, "")
		c.Options.Timeout = 100 * time.Millisecond
		check(t, c, rec, release)
	})
}

func TestSubmitWithoutIntakeOverNATS(t *testing.T) {
	t.Parallel()
	c := client.NewNATS(noIntake(t), subj)
	c.Options = client.Options{Retries: 1, Backoff: time.Millisecond}
	_, err := c.Submit(ctxT(t), submission())
	if !errors.Is(err, client.ErrNoIntake) || !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("error %v", err)
	}
	if !strings.Contains(err.Error(), "ballast controller") || !strings.Contains(err.Error(), "after 2 tries") {
		t.Fatalf("error %q does not say what to start or how often it tried", err)
	}
}

func TestSubmitWithoutIntakeOverHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	c := client.NewHTTP(url, "", nil)
	c.Options = client.Options{Retries: -1}
	_, err := c.Submit(ctxT(t), submission())
	if !errors.Is(err, client.ErrNoIntake) || !strings.Contains(err.Error(), "ballast dev") {
		t.Fatalf("error %v", err)
	}
}

func TestSubmitRefusesOversizeLocally(t *testing.T) {
	t.Parallel()
	transports(t, nil, func(t *testing.T, c client.Submitter, rec *recorder) {
		s := submission()
		s.Labels = map[string]string{"pad": strings.Repeat("x", jobs.MaxSubmissionBytes)}
		_, err := c.Submit(ctxT(t), s)
		var ve *jobs.ValidationError
		if !errors.Is(err, intake.ErrTooLarge) || !errors.As(err, &ve) || ve.Problems[0].Field != "body" {
			t.Fatalf("error %v", err)
		}
		if n := len(rec.submissions()); n != 0 {
			t.Fatalf("the intake was called %d times", n)
		}
	})
}

func TestSubmitStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	c := client.NewNATS(noIntake(t), subj)
	c.Options = client.Options{Retries: 100, Backoff: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Submit(ctx, submission())
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Submit did not return when its context ended")
	}
}

func TestHTTPToken(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := httptest.NewServer(intake.HTTPHandler(rec, "s3cret"))
	t.Cleanup(srv.Close)
	if _, err := client.NewHTTP(srv.URL, "s3cret", srv.Client()).Submit(ctxT(t), submission()); err != nil {
		t.Fatal(err)
	}
	_, err := client.NewHTTP(srv.URL, "nope", srv.Client()).Submit(ctxT(t), submission())
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != intake.CodeUnauthorized || ce.Status != http.StatusUnauthorized {
		t.Fatalf("error %v", err)
	}
	if n := len(rec.submissions()); n != 1 {
		t.Fatalf("the Submitter was called %d times, want 1 (no retry when unauthorized)", n)
	}
}

func TestHTTPForeignReplies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		body   string
		code   intake.Code
		tries  int32
	}{
		{http.StatusBadGateway, "<html>bad gateway</html>", intake.CodeUnavailable, 2},
		{http.StatusNotFound, "404 page not found", intake.CodeInternal, 1},
		{http.StatusOK, `{"hello":"world"}`, intake.CodeInternal, 1},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			t.Parallel()
			var tries atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				tries.Add(1)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			c := client.NewHTTP(srv.URL, "", srv.Client())
			c.Options = client.Options{Retries: 1, Backoff: time.Millisecond}
			_, err := c.Submit(ctxT(t), submission())
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Code != tc.code || ce.Status != tc.status {
				t.Fatalf("error %v", err)
			}
			if n := tries.Load(); n != tc.tries {
				t.Fatalf("%d tries, want %d", n, tc.tries)
			}
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	got := client.Options{}.WithDefaults()
	if got != (client.Options{Retries: 3, Backoff: 200 * time.Millisecond, Timeout: 10 * time.Second}) {
		t.Errorf("defaults %+v", got)
	}
	if got := (client.Options{Retries: -1}).WithDefaults(); got.Retries != 0 {
		t.Errorf("negative retries: %+v", got)
	}
}
