package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestJobsShowListsEveryAttemptWithItsReason: a job lent before it ran and
// then failing with exit 3 has two deliveries and one run. `jobs show`
// says so, and lists both attempts: the first did not run and was moved
// (with the rule's reason from the event stream), the second ran on w1 and
// failed with its exit code.
func TestJobsShowListsEveryAttemptWithItsReason(t *testing.T) {
	srv := testenv.NATS(t)
	f := newFlowEnv(t, srv.ClientURL())
	ctx := context.Background()
	_, sub := f.submitter(t)
	r, err := sub.Submit(ctx, jobs.Submission{Template: "trial", Params: raw(map[string]any{"lr": 0.5}), IdempotencyKey: "show"})
	if err != nil {
		t.Fatal(err)
	}
	f.ensureStream(t, srv)
	subj := subjects(f.cfg)
	const lent = "lent to fixed capacity (rule 2: fixed has room)"
	n, err := f.store.Move(ctx, r.JobID, 1, queues.QueueLoan, "rule 2")
	if err != nil || n != 2 {
		t.Fatalf("move: %d %v", n, err)
	}
	pub := eventbus.NewNATSPublisher(testenv.NATSConn(t, srv), subj)
	for _, e := range []events.Event{
		{ID: events.NewID(), Type: events.TypeJobQueued, JobID: r.JobID, Attempt: 1, Queue: "burst", Time: time.Now()},
		{ID: events.NewID(), Type: events.TypeJobMoved, JobID: r.JobID, Attempt: 2, Queue: "loan", Reason: lent, Time: time.Now()},
	} {
		if err := pub.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	j, err := f.store.Get(ctx, r.JobID)
	if err != nil {
		t.Fatal(err)
	}
	f.finish(t, j, jobs.StateFailed, 3)

	out := runOK(t, "jobs", "show", "--config", f.path, r.JobID)
	for _, want := range [][]string{{"runs", "1 (attempts that started"}, {"deliveries", "2 (queueings"}, {"attempts (reasons from the event stream)"}} {
		if _, ok := lineWith(out, want...); !ok {
			t.Errorf("jobs show has no line with %q:\n%s", want, out)
		}
	}
	one, ok := lineWith(out, "1", "submitted", "did not run", "moved", lent)
	if !ok {
		t.Errorf("no line for attempt 1 (moved, %q):\n%s", lent, out)
	}
	two, ok := lineWith(out, "2", "moved: "+lent, "w1", "failed", "exit 3")
	if !ok {
		t.Errorf("no line for attempt 2 (ran on w1, failed with exit 3):\n%s", out)
	}
	t.Logf("\n%s\n%s", one, two)

	var shown struct {
		Attempt    int `json:"attempt"`
		Runs       int `json:"runs"`
		Deliveries int `json:"deliveries"`
		History    struct {
			Attempts []struct {
				Outcome string `json:"outcome"`
			} `json:"attempts"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(runOK(t, "jobs", "show", "-o", "json", "--config", f.path, r.JobID)), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Runs != 1 || shown.Deliveries != 2 || shown.Attempt != 2 || len(shown.History.Attempts) != 2 || shown.History.Attempts[1].Outcome != "failed" {
		t.Errorf("jobs show -o json: %+v", shown)
	}

	// Without the event stream every attempt is still listed; the command
	// says why the reasons are missing.
	srv.Shutdown()
	out = runOK(t, "jobs", "show", "--config", f.path, r.JobID)
	if !strings.Contains(out, "reasons unknown") {
		t.Errorf("no word on the missing reasons:\n%s", out)
	}
	if _, ok := lineWith(out, "2", "w1", "failed"); !ok {
		t.Errorf("attempt 2 missing without the stream:\n%s", out)
	}
}
