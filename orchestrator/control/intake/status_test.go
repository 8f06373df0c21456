package intake_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

func statusRequest(t *testing.T, e natsEnv, body string) (intake.JobStatus, *intake.Error) {
	t.Helper()
	m, err := e.client.Request(subj.JobStatus(), []byte(body), 10*time.Second)
	if err != nil {
		t.Fatalf("status request: %v", err)
	}
	var probe struct {
		Error *intake.Error `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &probe); err != nil {
		t.Fatalf("reply is not JSON: %q", m.Data)
	}
	if probe.Error != nil {
		return intake.JobStatus{}, probe.Error
	}
	var st intake.JobStatus
	if err := json.Unmarshal(m.Data, &st); err != nil {
		t.Fatalf("reply is not a status: %q", m.Data)
	}
	return st, nil
}

// PREFIX.jobs.get answers with what the record says: the state as it
// changes, the exit code once finished; and refuses, naming the field,
// what is not a status request.
func TestNATSStatusReadsTheRecord(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	e := startNATS(t, &recorder{}, intake.NATSOptions{Jobs: store})
	ctx := context.Background()
	sub, err := store.Submit(ctx, jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassBurst,
		Timeout: jobs.Duration(time.Minute)}, queues.QueueBurst)
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Job.ID
	st, werr := statusRequest(t, e, `{"job_id":"`+id+`"}`)
	if werr != nil || st.JobID != id || st.State != jobs.StateQueued || st.Attempt != 1 || st.Queue != "burst" {
		t.Fatalf("queued job: %+v %+v", st, werr)
	}
	j, ok, err := store.Claim(ctx, queues.Delivery{JobID: id, Attempt: 1}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	code := 3
	if ok, err := store.Finish(ctx, j, "w1", jobs.StateFailed, &code, "exited with code 3"); err != nil || !ok {
		t.Fatalf("finish: %v %v", ok, err)
	}
	st, werr = statusRequest(t, e, `{"job_id":"`+id+`"}`)
	if werr != nil || st.State != jobs.StateFailed || st.ExitCode == nil || *st.ExitCode != 3 || st.LastError != "exited with code 3" ||
		st.Worker != "w1" || st.FinishedAt.IsZero() {
		t.Fatalf("finished job: %+v %+v", st, werr)
	}

	// The Go client reads the same, and names an unknown job by its code.
	cl := client.NewNATS(e.client, subj)
	if got, err := cl.Status(ctx, id); err != nil || got.State != jobs.StateFailed || got.Attempt != 1 {
		t.Fatalf("client.Status: %+v %v", got, err)
	}
	var ce *client.Error
	if _, err := cl.Status(ctx, jobs.NewID(time.Now())); !errors.As(err, &ce) || ce.Code != intake.CodeNotFound {
		t.Fatalf("client.Status of an unknown job: %v, want not_found", err)
	}

	for _, c := range []struct {
		name, body string
		code       intake.Code
		mention    string
	}{
		{"unknown job", `{"job_id":"` + jobs.NewID(time.Now()) + `"}`, intake.CodeNotFound, "never submitted"},
		{"not an ID", `{"job_id":"../../ballast:outbox"}`, intake.CodeInvalid, "job_id"},
		{"no ID", `{}`, intake.CodeInvalid, "job_id"},
		{"unknown field", `{"job_id":"` + id + `","state":"succeeded"}`, intake.CodeInvalid, "state"},
		{"not JSON", `job please`, intake.CodeInvalid, "job_id"},
		{"too large", `{"job_id":"` + strings.Repeat("a", 2000) + `"}`, intake.CodeTooLarge, "bytes"},
	} {
		_, werr := statusRequest(t, e, c.body)
		if werr == nil || werr.Code != c.code || !strings.Contains(werr.Message+problemsText(werr), c.mention) {
			t.Errorf("%s: got %+v, want code %s mentioning %q", c.name, werr, c.code, c.mention)
		}
	}
}

// A status request while Redis is down says so, and the caller may retry.
func TestNATSStatusWithoutRedisIsUnavailable(t *testing.T) {
	t.Parallel()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = dead.Close() })
	e := startNATS(t, &recorder{}, intake.NATSOptions{Jobs: queues.NewStore(dead, queues.StoreOptions{})})
	_, werr := statusRequest(t, e, `{"job_id":"`+jobs.NewID(time.Now())+`"}`)
	if werr == nil || werr.Code != intake.CodeUnavailable {
		t.Fatalf("got %+v, want unavailable", werr)
	}
}

func problemsText(e *intake.Error) string {
	var b strings.Builder
	for _, p := range e.Problems {
		b.WriteString(" " + p.Field + ": " + p.Message)
	}
	return b.String()
}
