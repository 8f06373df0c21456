package workers_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// TestCancelWakesTheWorker: a store built with a CancelWaker sends the
// wake-up itself once the cancel is recorded, so a running job stops long
// before the worker's next heartbeat.
func TestCancelWakesTheWorker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o, ch := e.withControl()
	o.Heartbeat = 10 * time.Second // only the wake-up can explain a fast stop
	// Beats this far apart would lapse any worker TTL: no self-fence.
	o.SelfFence = -1
	w := e.start(o)
	canceller := queues.NewStore(e.rdb, queues.StoreOptions{Namespace: e.ns,
		CancelWaker: workers.NATSControl{Conn: testenv.NATSConn(t, ch.srv), Subjects: ch.subj}})

	j := e.submit(e.shell(`echo started > "$BALLAST_PARAM_DIR/started1"; while :; do sleep 0.05; done`), queues.QueueCore)
	e.waitFile("started1", wait)
	asked := time.Now()
	if res, err := canceller.Cancel(context.Background(), j.ID); res != queues.CancelRequested || err != nil {
		t.Fatalf("Cancel = %v, %v", res, err)
	}
	got := e.waitFor(j.ID, 3*time.Second, "the cancel to stop the job", func(j jobs.Job) bool { return j.State.Terminal() })
	if got.State != jobs.StateCancelled || got.Worker != w.ID() && got.Worker != "" {
		t.Fatalf("state %s on %q, want cancelled", got.State, got.Worker)
	}
	t.Logf("cancel to cancelled: %s (heartbeat %s)", time.Since(asked).Round(time.Millisecond), o.Heartbeat)
}
