package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/logs"
)

// TestSubmitWaitEndsOnTheRecordWhenEventsAreLost: `submit --wait` follows
// a job whose every event is lost (the intake here publishes none, and the
// job is ended straight in Redis, as a worker that crashed between its
// write and its publish would leave it). It must still end, within a poll
// of the record, with the job's outcome as its exit status.
func TestSubmitWaitEndsOnTheRecordWhenEventsAreLost(t *testing.T) {
	srv := testenv.NATS(t)
	f := newFlowEnv(t, srv.ClientURL())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.ensureStream(t, srv)
	f.startIntake(t, srv) // no Events: nothing is announced

	for _, c := range []struct {
		state    jobs.State
		wantCode int
	}{{jobs.StateSucceeded, 0}, {jobs.StateFailed, 4}} {
		type result struct {
			code        int
			out, errOut string
		}
		done := make(chan result, 1)
		go func() {
			var out, errOut bytes.Buffer
			code := Run(ctx, []string{"submit", "--wait", "--config", f.path, "upload"}, &out, &errOut)
			done <- result{code, out.String(), errOut.String()}
		}()
		claimed := f.claimSubmitted(t)
		code := 0
		lines := []logs.Line{{Attempt: claimed.Attempt, Stream: "stdout", Text: "loading"}}
		if c.state == jobs.StateFailed {
			code = 4
			lines = append(lines, logs.Line{Attempt: claimed.Attempt, Stream: "stderr", Text: "error: disk full"})
		}
		if err := logs.New(f.store).AppendLogs(ctx, claimed.ID, lines, 100); err != nil {
			t.Fatal(err)
		}
		if ok, err := f.store.Finish(ctx, claimed, "w1", c.state, &code, ""); err != nil || !ok {
			t.Fatalf("finish: %v %v", ok, err)
		}
		ended := time.Now()
		select {
		case r := <-done:
			if r.code != c.wantCode || !strings.Contains(r.out, "job."+string(c.state)) || !strings.Contains(r.out, "from the job's record") {
				t.Fatalf("%s: exit %d, stdout %q, stderr %q; want exit %d and the end read from the record", c.state, r.code, r.out, r.errOut, c.wantCode)
			}
			// The job's stdout is streamed into the output, its stderr is not
			// (a failure prints its tail once, on stderr).
			if !strings.Contains(r.out, "  | loading\n") || strings.Contains(r.out, "disk full") {
				t.Fatalf("%s: stdout %q; want the job's stdout line and not its stderr", c.state, r.out)
			}
			if !strings.Contains(r.out, "run 1, delivery 1") {
				t.Fatalf("%s: stdout %q; want the end to name run 1, delivery 1", c.state, r.out)
			}
			if c.state == jobs.StateFailed && (!strings.Contains(r.errOut, "stderr lines of job") || !strings.Contains(r.errOut, "error: disk full") || strings.Contains(r.errOut, "loading")) {
				t.Fatalf("failed job: stderr %q; want the tail of its stderr, not its stdout", r.errOut)
			}
			t.Logf("%s: --wait ended %s after the job, with no event", c.state, time.Since(ended).Round(time.Millisecond))
		case <-time.After(followPoll + 5*time.Second):
			t.Fatalf("%s: submit --wait still waiting %s after the job ended: a lost event hangs it", c.state, followPoll+5*time.Second)
		}
	}
}

// startIntake serves f's submissions and status requests on srv, with a
// Submitter that publishes no events.
func (f flowEnv) startIntake(t *testing.T, srv *server.Server) {
	t.Helper()
	_, sub := f.submitter(t)
	in, err := intake.NewNATSServer(testenv.NATSConn(t, srv), sub, intake.NATSOptions{Subjects: subjects(f.cfg), Jobs: f.store, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Stop)
}

// claimSubmitted waits for the one job a test submitted to be queued and
// claims it for worker w1, as a worker would.
func (f *flowEnv) claimSubmitted(t *testing.T) jobs.Job {
	t.Helper()
	ctx := context.Background()
	var j jobs.Job
	testenv.Eventually(t, 10*time.Second, "the submitted job", func() bool {
		list, err := f.store.List(ctx, queues.ListOptions{Limit: 1, State: jobs.StateQueued})
		if err != nil || len(list) == 0 {
			return false
		}
		j = list[0]
		return true
	})
	claimed, ok, err := f.store.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: j.Attempt}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	return claimed
}
