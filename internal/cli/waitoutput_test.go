package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues/logs"
)

// TestSubmitWaitStreamsOutputWhileTheJobRuns: the job's stdout shows in
// `submit --wait` while the job still runs, line by line as it is
// written, not only once it ended; its stderr does not (a failure prints
// its tail).
func TestSubmitWaitStreamsOutputWhileTheJobRuns(t *testing.T) {
	srv := testenv.NATS(t)
	f := newFlowEnv(t, srv.ClientURL())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.ensureStream(t, srv)
	f.startIntake(t, srv)

	var out, errOut testenv.LockedBuffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"submit", "--wait", "--config", f.path, "upload"}, &out, &errOut) }()
	claimed := f.claimSubmitted(t)
	for i, text := range []string{"epoch 1", "epoch 2"} {
		lines := []logs.Line{{Attempt: claimed.Attempt, Stream: "stdout", Text: text},
			{Attempt: claimed.Attempt, Stream: "stderr", Text: "warning " + text}}
		if err := logs.New(f.store).AppendLogs(ctx, claimed.ID, lines, 100); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 5*time.Second, "line "+text+" streamed while the job runs", func() bool {
			return strings.Contains(out.String(), "  | "+text+"\n")
		})
		if i == 0 && strings.Contains(out.String(), "epoch 2") {
			t.Fatal("a line showed before it was written")
		}
	}
	if s := out.String() + errOut.String(); strings.Contains(s, "warning epoch") {
		t.Fatalf("stderr streamed into --wait's output: %q", s)
	}
	code := 0
	if ok, err := f.store.Finish(ctx, claimed, "w1", jobs.StateSucceeded, &code, ""); err != nil || !ok {
		t.Fatalf("finish: %v %v", ok, err)
	}
	select {
	case c := <-done:
		if c != 0 || strings.Count(out.String(), "  | epoch 1\n") != 1 {
			t.Fatalf("exit %d, stdout %q; want 0 and each line once", c, out.String())
		}
	case <-time.After(followPoll + 5*time.Second):
		t.Fatal("submit --wait did not end after the job")
	}
}
