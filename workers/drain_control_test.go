package workers_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

// A recorded drain stops new work but lets running jobs finish where they are:
// no preemption, no requeue.
func TestDrainControlLetsRunningJobsFinish(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o, ch := e.withControl()
	o.Pool, o.Queues = "ondemand", []queues.Queue{queues.QueueOnDemand, queues.QueueBurst}
	o.Heartbeat = 100 * time.Millisecond
	w := e.start(o)

	// Runs until the test creates "finish".
	j := e.submit(e.shell(`echo started > "$BALLAST_PARAM_DIR/started1"
while [ ! -e "$BALLAST_PARAM_DIR/finish" ]; do sleep 0.05; done`), queues.QueueOnDemand)
	e.waitFile("started1", wait)
	if err := registry.New(e.store).RequestDrain(context.Background(), w.ID()); err != nil {
		t.Fatal(err)
	}
	if err := workers.NotifyControl(ch.ctl, ch.subj, w.ID(), workers.ControlMessage{Action: workers.ControlDrain}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 3*time.Second, "the registry shows the worker draining", func() bool {
		ws, err := registry.New(e.store).Workers(context.Background())
		return err == nil && len(ws) == 1 && ws[0].Draining
	})
	late := e.submit(e.checkpointing(), queues.QueueBurst)
	e.touch("finish") // the running job was not stopped by the drain: it ends by itself
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 1 || got.Preemptions != 0 {
		t.Fatalf("drained job: %s attempt %d preemptions %d", got.State, got.Attempt, got.Preemptions)
	}
	if j := e.get(late.ID); j.State != jobs.StateQueued {
		t.Fatalf("a draining worker took new work: %s", j.State)
	}
}
