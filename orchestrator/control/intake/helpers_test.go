package intake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// recorder is a Submitter that records what it was given and answers with
// the function given to set, or with a fresh receipt.
type recorder struct {
	stub testenv.Stub[jobs.Submission, intake.Receipt]
}

func (r *recorder) Submit(ctx context.Context, s jobs.Submission) (intake.Receipt, error) {
	return r.stub.Call(ctx, s, func(s jobs.Submission) intake.Receipt {
		return intake.Receipt{JobID: "job-" + s.IdempotencyKey, Attempt: 1, State: jobs.StateQueued, Queue: "burst"}
	})
}

// newRecorder is a recorder answering with do (nil: the default).
func newRecorder(do func(ctx context.Context, s jobs.Submission) (intake.Receipt, error)) *recorder {
	r := &recorder{}
	r.set(do)
	return r
}

func (r *recorder) set(do func(ctx context.Context, s jobs.Submission) (intake.Receipt, error)) {
	if do == nil {
		r.stub.Set(nil) // back to the default
		return
	}
	r.stub.Set(func(ctx context.Context, s jobs.Submission, _ int) (intake.Receipt, error) { return do(ctx, s) })
}

func (r *recorder) submissions() []jobs.Submission { return r.stub.Calls() }

// logBuffer collects a server's log for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

var subj = events.Subjects{Prefix: "bt"}

// natsEnv runs a NATSServer on its own connection and returns a second
// connection for the caller's side.
type natsEnv struct {
	client *nats.Conn
	srvNC  *nats.Conn
	srv    *intake.NATSServer
	log    *logBuffer
}

func startNATS(t *testing.T, sub intake.Submitter, opts intake.NATSOptions) natsEnv {
	t.Helper()
	ns := testenv.NATS(t)
	e := natsEnv{client: testenv.NATSConn(t, ns), srvNC: testenv.NATSConn(t, ns), log: &logBuffer{}}
	opts.Subjects = subj
	opts.Logger = e.log.logger()
	srv, err := intake.NewNATSServer(e.srvNC, sub, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	e.srv = srv
	return e
}

// reply is either a receipt or a wire error.
type reply struct {
	status  int // HTTP only
	receipt intake.Receipt
	err     *intake.Error
}

func decodeReply(t *testing.T, data []byte) reply {
	t.Helper()
	var probe struct {
		Error *intake.Error `json:"error"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		t.Fatalf("reply is not JSON: %v: %q", err, data)
	}
	if probe.Error != nil {
		return reply{err: probe.Error}
	}
	var r reply
	if err := json.Unmarshal(data, &r.receipt); err != nil {
		t.Fatalf("reply is not a receipt: %v: %q", err, data)
	}
	return r
}

func (e natsEnv) request(t *testing.T, data []byte) reply {
	t.Helper()
	m, err := e.client.Request(subj.Submit(), data, 10*time.Second)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	return decodeReply(t, m.Data)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func submission(key string) jobs.Submission {
	return jobs.Submission{Template: "train", IdempotencyKey: key, Params: map[string]json.RawMessage{"epochs": json.RawMessage("3")}}
}

func oversize() []byte {
	pad := strings.Repeat("x", jobs.MaxSubmissionBytes)
	return []byte(`{"template":"train","labels":{"pad":"` + pad + `"}}`)
}
