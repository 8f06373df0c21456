package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// intakeEnv is a flowEnv with a NATS intake in front of its store, for
// the commands that submit.
func intakeEnv(t *testing.T) flowEnv {
	t.Helper()
	srv := testenv.NATS(t)
	f := newFlowEnv(t, srv.ClientURL())
	_, sub := f.submitter(t)
	in, err := intake.NewNATSServer(testenv.NATSConn(t, srv), sub, intake.NATSOptions{Subjects: subjects(f.cfg), Jobs: f.store, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Stop)
	return f
}

// finish ends a queued job as a worker would, with exit code code.
func (f flowEnv) finish(t *testing.T, j jobs.Job, state jobs.State, code int) {
	t.Helper()
	ctx := context.Background()
	claimed, ok, err := f.store.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: j.Attempt}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if ok, err := f.store.Finish(ctx, claimed, "w1", state, &code, ""); err != nil || !ok {
		t.Fatalf("finish: %v %v", ok, err)
	}
}

func TestRetrySubmitsAFinishedJobAgainAndRefusesAnActiveOne(t *testing.T) {
	f := intakeEnv(t)
	ctx := context.Background()
	_, sub := f.submitter(t)
	r, err := sub.Submit(ctx, jobs.Submission{Template: "trial", Params: raw(map[string]any{"lr": 0.25}), Team: "vision",
		Labels: map[string]string{"env": "prod"}, IdempotencyKey: "first"})
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "retry", "--config", f.path, r.JobID)
	if code != 1 || !strings.Contains(errOut, "is still queued: only a finished job can be retried") {
		t.Fatalf("retry of a queued job: exit %d, %q", code, errOut)
	}
	old, err := f.store.Get(ctx, r.JobID)
	if err != nil {
		t.Fatal(err)
	}
	f.finish(t, old, jobs.StateFailed, 3)

	seen := map[string]bool{r.JobID: true}
	for range 2 { // twice: a fresh key each time, so two new jobs
		var receipt intake.Receipt
		if err := json.Unmarshal([]byte(runOK(t, "retry", "--config", f.path, "-o", "json", r.JobID)), &receipt); err != nil {
			t.Fatal(err)
		}
		if seen[receipt.JobID] || receipt.Duplicate {
			t.Fatalf("retry returned an existing job: %+v", receipt)
		}
		seen[receipt.JobID] = true
		j, err := f.store.Get(ctx, receipt.JobID)
		if err != nil {
			t.Fatal(err)
		}
		s := j.Spec
		if s.Template != "trial" || s.Params["lr"] != 0.25 || s.Team != "vision" || s.Labels["env"] != "prod" ||
			s.Labels[jobs.RetryOfLabel] != r.JobID || !strings.HasPrefix(s.IdempotencyKey, "retry-"+r.JobID) || j.State != jobs.StateQueued {
			t.Errorf("retried spec %+v, state %s", s, j.State)
		}
	}
}
