package client_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

var subj = events.Subjects{Prefix: "bt"}

// fast keeps retry tests quick; the backoff itself is tested separately.
var fast = client.Options{Retries: 3, Backoff: time.Millisecond, Timeout: 5 * time.Second}

// recorder is a Submitter answering the n-th call (from 0) with answer(n),
// or with a fresh receipt when answer is nil.
type recorder struct {
	stub testenv.Stub[jobs.Submission, intake.Receipt]
}

// newRecorder is a recorder answering with answer (nil: the default).
func newRecorder(answer func(ctx context.Context, n int) (intake.Receipt, error)) *recorder {
	r := &recorder{}
	if answer != nil {
		r.stub.Set(func(ctx context.Context, _ jobs.Submission, n int) (intake.Receipt, error) { return answer(ctx, n) })
	}
	return r
}

func (r *recorder) Submit(ctx context.Context, s jobs.Submission) (intake.Receipt, error) {
	return r.stub.Call(ctx, s, receiptFor)
}

func receiptFor(s jobs.Submission) intake.Receipt {
	return intake.Receipt{JobID: "job-" + s.IdempotencyKey, Attempt: 1, State: jobs.StateQueued, Queue: "burst"}
}

func (r *recorder) submissions() []jobs.Submission { return r.stub.Calls() }

// keys returns the idempotency keys the Submitter saw.
func (r *recorder) keys() []string {
	var out []string
	for _, s := range r.submissions() {
		out = append(out, s.IdempotencyKey)
	}
	return out
}

// natsClient runs an intake over embedded NATS and returns a client of it.
func natsClient(t *testing.T, sub intake.Submitter) *client.NATS {
	t.Helper()
	ns := testenv.NATS(t)
	srv, err := intake.NewNATSServer(testenv.NATSConn(t, ns), sub, intake.NATSOptions{Subjects: subj, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	c := client.NewNATS(testenv.NATSConn(t, ns), subj)
	c.Options = fast
	return c
}

// httpClient runs the intake's HTTP handler and returns a client of it.
func httpClient(t *testing.T, sub intake.Submitter, token string) *client.HTTP {
	t.Helper()
	srv := httptest.NewServer(intake.HTTPHandler(sub, token))
	t.Cleanup(srv.Close)
	c := client.NewHTTP(srv.URL+"/", token, srv.Client())
	c.Options = fast
	return c
}

// transports runs f against both clients, each with its own recorder.
func transports(t *testing.T, answer func(ctx context.Context, n int) (intake.Receipt, error), f func(t *testing.T, c client.Submitter, rec *recorder)) {
	t.Helper()
	t.Run("nats", func(t *testing.T) {
		t.Parallel()
		rec := newRecorder(answer)
		f(t, natsClient(t, rec), rec)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		rec := newRecorder(answer)
		f(t, httpClient(t, rec, ""), rec)
	})
}

func submission() jobs.Submission {
	return jobs.Submission{Template: "train", Params: map[string]json.RawMessage{"epochs": json.RawMessage("3")}}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// noIntake returns a NATS connection on which nothing serves submissions.
func noIntake(t *testing.T) *nats.Conn {
	return testenv.NATSConn(t, testenv.NATS(t))
}
