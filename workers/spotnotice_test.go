package workers_test

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/events"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// A spot notice makes the worker checkpoint and requeue every job to burst,
// take no more work, and report that it has been reclaimed.
func TestSpotNoticeRequeuesEveryJobAndReclaims(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := testenv.NATS(t)
	ctl := testenv.NATSConn(t, srv)
	subj := events.Subjects{Prefix: e.ns}
	o := e.options()
	o.Pool, o.Slots, o.Queues = "spot", 2, []queues.Queue{queues.QueueBurst}
	o.Heartbeat = 5 * time.Second // only the control message can explain a fast reaction
	o.Control = testenv.NATSConn(t, srv)
	o.Subjects = subj
	w := e.start(o)

	a := e.submit(e.checkpointing(), queues.QueueBurst)
	b := e.submit(e.checkpointing(), queues.QueueBurst)
	e.waitFor(a.ID, wait, "a running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
	e.waitFor(b.ID, wait, "b running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })

	sent := time.Now()
	if err := workers.NotifyControl(ctl, subj, w.ID(), workers.ControlMessage{Action: workers.ControlSpotNotice, NoticeSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Reclaimed():
	case <-time.After(5 * time.Second):
		t.Fatal("the worker did not report itself reclaimed")
	}
	t.Logf("spot notice to both jobs requeued: %s", time.Since(sent).Round(time.Millisecond))
	for _, id := range []string{a.ID, b.ID} {
		j := e.get(id)
		if j.State != jobs.StateQueued || j.Attempt != 2 || j.Queue != string(queues.QueueBurst) || j.Preemptions != 1 || j.Checkpoint != "c1" {
			t.Errorf("job %s after the notice: state %s attempt %d queue %s preemptions %d checkpoint %q",
				id, j.State, j.Attempt, j.Queue, j.Preemptions, j.Checkpoint)
		}
	}
	// A reclaimed worker takes no more work.
	c := e.submit(e.checkpointing(), queues.QueueBurst)
	time.Sleep(200 * time.Millisecond) // a negative check: give a wrongly live worker time to claim
	if j := e.get(c.ID); j.State != jobs.StateQueued || j.Attempt != 1 {
		t.Errorf("a reclaimed worker took new work: %s attempt %d", j.State, j.Attempt)
	}
	if err := (workers.ControlMessage{Action: workers.ControlSpotNotice, NoticeSeconds: -1}).Validate(); err == nil {
		t.Error("a negative notice was accepted")
	}
}
