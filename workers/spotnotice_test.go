package workers_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

// A recorded spot notice makes the worker checkpoint and requeue every job to burst,
// take no more work, and report that it has been reclaimed.
func TestSpotNoticeRequeuesEveryJobAndReclaims(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o, ch := e.withControl()
	o.Pool, o.Slots, o.Queues, o.Spot = "spot", 2, []queues.Queue{queues.QueueBurst}, true
	o.Heartbeat = 5 * time.Second // only the control message can explain a fast reaction
	// Beats this far apart would lapse any worker TTL: no self-fence.
	o.SelfFence = -1
	w := e.start(o)

	// Each job in its own directory, so that "started1" means that job's
	// TERM trap is in place (a running record alone only means claimed).
	inDir := func(sub string) jobs.Spec {
		spec := e.checkpointing()
		dir := filepath.Join(e.dir, sub)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		spec.Params["dir"] = dir
		return spec
	}
	a := e.submit(inDir("a"), queues.QueueBurst)
	b := e.submit(inDir("b"), queues.QueueBurst)
	e.waitFile("a/started1", wait)
	e.waitFile("b/started1", wait)

	sent := time.Now()
	if err := registry.New(e.store).RequestSpotNotice(context.Background(), w.ID(), sent.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := workers.NotifyControl(ch.ctl, ch.subj, w.ID(), workers.ControlMessage{Action: workers.ControlSpotNotice, NoticeSeconds: 10}); err != nil {
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
		if j.State != jobs.StateQueued || j.Attempt != 2 || j.Queue != string(queues.QueueBurst) || j.Preemptions != 1 ||
			j.SpotPreemptions != 1 || j.Checkpoint != "c1" {
			t.Errorf("job %s after the notice: state %s attempt %d queue %s preemptions %d (spot %d) checkpoint %q",
				id, j.State, j.Attempt, j.Queue, j.Preemptions, j.SpotPreemptions, j.Checkpoint)
		}
	}
	// A reclaimed worker takes no more work.
	c := e.submit(inDir("c"), queues.QueueBurst)
	time.Sleep(200 * time.Millisecond) // a negative check: give a wrongly live worker time to claim
	if j := e.get(c.ID); j.State != jobs.StateQueued || j.Attempt != 1 {
		t.Errorf("a reclaimed worker took new work: %s attempt %d", j.State, j.Attempt)
	}
	if err := (workers.ControlMessage{Action: workers.ControlSpotNotice, NoticeSeconds: -1}).Validate(); err == nil {
		t.Error("a negative notice was accepted")
	}
}
