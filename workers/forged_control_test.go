package workers_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

// TestForgedControlMessagesChangeNothing: anyone who can publish on NATS can
// send a worker every control action, for its own running job. With nothing
// recorded in Redis, the worker only beats: the job runs to completion on
// the same attempt and worker, and the worker keeps taking work.
func TestForgedControlMessagesChangeNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o, ch := e.withControl()
	w := e.start(o)

	j := e.submit(e.shell(`echo started > "$BALLAST_PARAM_DIR/started1"
while [ ! -e "$BALLAST_PARAM_DIR/finish" ]; do sleep 0.05; done`), queues.QueueCore)
	e.waitFile("started1", wait)
	forged := []workers.ControlMessage{
		{Action: workers.ControlDrain},
		{Action: workers.ControlSpotNotice, NoticeSeconds: 1},
		{Action: workers.ControlCancel, JobID: j.ID, Attempt: 1},
		{Action: workers.ControlPreempt, JobID: j.ID, Attempt: 1},
	}
	for _, m := range forged {
		if err := workers.NotifyControl(ch.ctl, ch.subj, w.ID(), m); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.ctl.Flush(); err != nil {
		t.Fatal(err)
	}
	// Let the worker act if it would: several beats after the messages.
	since := time.Now()
	testenv.Eventually(t, wait, "three heartbeats after the forged messages", func() bool {
		ws, err := registry.New(e.store).Workers(context.Background())
		return err == nil && len(ws) == 1 && ws[0].LastBeat.After(since.Add(3*o.Heartbeat))
	})
	ws, _ := registry.New(e.store).Workers(context.Background())
	if len(ws) != 1 || ws[0].Draining || ws[0].ID != w.ID() {
		t.Fatalf("registry after forged messages: %+v", ws)
	}
	if got := e.get(j.ID); got.State != jobs.StateRunning || got.Attempt != 1 || got.Worker != w.ID() {
		t.Fatalf("job after forged messages: %s attempt %d on %q", got.State, got.Attempt, got.Worker)
	}
	select {
	case <-w.Reclaimed():
		t.Fatal("a forged spot notice reclaimed the worker")
	default:
	}
	e.touch("finish")
	if got := e.waitTerminal(j.ID, wait); got.State != jobs.StateSucceeded || got.Attempt != 1 || got.Preemptions != 0 {
		t.Fatalf("job: %s attempt %d preemptions %d", got.State, got.Attempt, got.Preemptions)
	}
	// Still taking work.
	next := e.submit(e.shell(`true`), queues.QueueCore)
	if got := e.waitTerminal(next.ID, wait); got.State != jobs.StateSucceeded || got.Worker != w.ID() {
		t.Fatalf("next job: %s on %q", got.State, got.Worker)
	}
}

// TestSpotNoticeRefusedForAFixedWorker: the registry refuses the notice
// with a clear error, and a notice written around the check (by hand) is
// refused by the worker itself.
func TestSpotNoticeRefusedForAFixedWorker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o, ch := e.withControl()
	w := e.start(o)
	ctx := context.Background()

	err := registry.New(e.store).RequestSpotNotice(ctx, w.ID(), time.Now().Add(time.Second))
	if !errors.Is(err, registry.ErrNotSpot) {
		t.Fatalf("spot notice to a fixed worker: %v, want ErrNotSpot", err)
	}
	t.Logf("refused: %v", err)

	j := e.submit(e.shell(`echo started > "$BALLAST_PARAM_DIR/started1"
while [ ! -e "$BALLAST_PARAM_DIR/finish" ]; do sleep 0.05; done`), queues.QueueCore)
	e.waitFile("started1", wait)
	if err := e.rdb.HSet(ctx, e.store.Namespace().Worker(w.ID()), queues.IntentSpotField, time.Now().UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := workers.NotifyControl(ch.ctl, ch.subj, w.ID(), workers.ControlMessage{Action: workers.ControlSpotNotice}); err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	testenv.Eventually(t, wait, "three heartbeats after the notice", func() bool {
		ws, err := registry.New(e.store).Workers(ctx)
		return err == nil && len(ws) == 1 && ws[0].LastBeat.After(since.Add(3*o.Heartbeat))
	})
	if got := e.get(j.ID); got.State != jobs.StateRunning || got.Attempt != 1 {
		t.Fatalf("a fixed worker acted on a spot notice: %s attempt %d", got.State, got.Attempt)
	}
	e.touch("finish")
	if got := e.waitTerminal(j.ID, wait); got.State != jobs.StateSucceeded || got.Attempt != 1 {
		t.Fatalf("job: %s attempt %d", got.State, got.Attempt)
	}
}
