package workers_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

// recorder is an events.Publisher that keeps what it is given.
type recorder struct {
	mu  sync.Mutex
	evs []events.Event
}

func (r *recorder) Publish(_ context.Context, e events.Event) error {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
	return nil
}

// find returns the events of one type about one job.
func (r *recorder) find(jobID string, typ events.Type) []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []events.Event
	for _, e := range r.evs {
		if e.JobID == jobID && e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// checkpointing is a job that runs until SIGTERM, then reports checkpoint
// "c<attempt>" and exits 0, as a well-behaved checkpointable job does. Each
// attempt writes started<attempt> when it runs and resumed<attempt> with what
// it resumes from.
func (e *env) checkpointing() jobs.Spec {
	spec := e.shell(`
echo "[$BALLAST_RESUME_FROM]" > "$BALLAST_PARAM_DIR/resumed$BALLAST_ATTEMPT"
if [ -e "$BALLAST_PARAM_DIR/finish" ]; then exit 0; fi
trap 'echo "{\"checkpoint\":\"c$BALLAST_ATTEMPT\"}"; exit 0' TERM
echo started > "$BALLAST_PARAM_DIR/started$BALLAST_ATTEMPT"
while :; do sleep 0.05; done`)
	spec.Checkpointable = true
	spec.Class = jobs.ClassBurst
	spec.Rhythm = jobs.RhythmPulse
	return spec
}

// preemptField reads the raw preempt request of a job ("" when none).
func (e *env) preemptField(id string) string {
	e.t.Helper()
	v, err := e.rdb.HGet(context.Background(), e.store.Namespace().Job(id), "preempt").Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		e.t.Fatal(err)
	}
	return v
}

// queueSize is how many tasks a logical queue holds; asynq does not know a
// queue that never had one.
func (e *env) queueSize(q queues.Queue) int {
	e.t.Helper()
	known, err := asynq.NewInspectorFromRedisClient(e.rdb).Queues()
	if err != nil {
		e.t.Fatalf("queues: %v", err)
	}
	for _, name := range known {
		if name == e.store.Namespace().AsynqQueue(q) {
			return e.asynqQueue(q).Size
		}
	}
	return 0
}

// checkPreempted checks a job preempted once from attempt 1 into burst,
// with the checkpoint its attempt 1 wrote on SIGTERM.
func checkPreempted(t *testing.T, e *env, rec *recorder, got jobs.Job, reason string) {
	t.Helper()
	if got.State != jobs.StateQueued || got.Attempt != 2 || got.Runs != 1 || got.Queue != "burst" || got.Checkpoint != "c1" ||
		got.Preemptions != 1 || got.SpotPreemptions != 0 || got.Requeues != 0 || got.Retries != 0 || got.LastError != "" || got.ExitCode != nil {
		t.Fatalf("after the preemption: state %s attempt %d runs %d queue %s checkpoint %q preemptions %d requeues %d retries %d error %q exit %s",
			got.State, got.Attempt, got.Runs, got.Queue, got.Checkpoint, got.Preemptions, got.Requeues, got.Retries, got.LastError, code(got))
	}
	if p := e.preemptField(got.ID); p != "" {
		t.Errorf("the preempt request %q survived the preemption", p)
	}
	// The record is requeued before its task is enqueued (the outbox
	// covers the gap), so the task may land a moment after the record.
	testenv.Eventually(t, wait, "attempt 2's task in burst", func() bool { return e.queueSize(queues.QueueBurst) == 1 })
	var evs []events.Event
	testenv.Eventually(t, wait, "the job.requeued event", func() bool {
		evs = rec.find(got.ID, events.TypeJobRequeued)
		return len(evs) > 0
	})
	ev := evs[0]
	// The requeue names delivery 2 and the one run that preceded it, as
	// the running event of attempt 1 named run 1.
	if running := rec.find(got.ID, events.TypeJobRunning); len(running) != 1 || running[0].Runs != 1 || running[0].Attempt != 1 {
		t.Errorf("running events %+v, want one for run 1, delivery 1", running)
	}
	if len(evs) != 1 || ev.Attempt != 2 || ev.Runs != 1 || ev.Queue != "burst" || ev.Reason != "preempted: "+reason ||
		ev.Data["to"] != "burst" || ev.Data["checkpoint"] != "c1" {
		t.Errorf("requeued events %+v, want one for attempt 2 to burst from c1, reason %q", evs, "preempted: "+reason)
	}
	if evs := rec.find(got.ID, events.TypeJobFailed); len(evs) != 0 {
		t.Errorf("a preempted job was announced failed: %+v", evs)
	}
}

func TestPreemptAtHeartbeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	rec := &recorder{}
	o := e.options()
	o.Slots = 1
	o.Heartbeat = time.Second // the production default: only the heartbeat tells it
	o.Events = rec
	e.start(o)
	j := e.submit(e.checkpointing(), queues.QueueLoan) // a burst job lent to fixed capacity
	e.waitFile("started1", wait)

	asked := time.Now()
	if ok, err := e.store.RequestPreempt(ctx, j.ID, 1, queues.QueueBurst, "reclaim for core"); !ok || err != nil {
		t.Fatalf("RequestPreempt = %v, %v", ok, err)
	}
	// One heartbeat to learn of it, then SIGTERM and the job's own
	// checkpoint; the margin is for a loaded machine.
	got := e.waitFor(j.ID, 2*time.Second, "the preempted job to be requeued", func(j jobs.Job) bool {
		return j.State != jobs.StateRunning
	})
	t.Logf("preempted by heartbeat in %s", got.QueuedAt.Sub(asked).Round(time.Millisecond))
	checkPreempted(t, e, rec, got, "reclaim for core")

	// An elastic worker picks attempt 2 up from burst and resumes from c1.
	elastic := e.options()
	elastic.Pool = "spot"
	elastic.Queues = []queues.Queue{queues.QueueBurst}
	e.touch("finish")
	e.start(elastic)
	got = e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 2 || got.Preemptions != 1 {
		t.Fatalf("state %s attempt %d preemptions %d error %q, want attempt 2 to succeed", got.State, got.Attempt, got.Preemptions, got.LastError)
	}
	if r := e.read("resumed2"); r != "[c1]\n" {
		t.Errorf("attempt 2 resumed from %q, want c1", r)
	}
}

func TestPreemptByControlMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	rec := &recorder{}
	o, ch := e.withControl()
	o.Slots = 2
	// Five seconds: a stop within a fraction of that can only be the
	// control message's doing.
	o.Heartbeat = 5 * time.Second
	// Beats this far apart would lapse any worker TTL: no self-fence.
	o.SelfFence = -1
	o.Events = rec
	w := e.start(o)
	started := time.Now()

	j := e.submit(e.checkpointing(), queues.QueueLoan)
	e.waitFile("started1", wait)
	// Noise on the subject is ignored.
	if err := ch.ctl.Publish(ch.subj.Control(w.ID()), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	asked := time.Now()
	if ok, err := e.store.RequestPreempt(ctx, j.ID, 1, queues.QueueBurst, "reclaim for core"); !ok || err != nil {
		t.Fatalf("RequestPreempt = %v, %v", ok, err)
	}
	msg := workers.ControlMessage{JobID: j.ID, Attempt: 1, Action: workers.ControlPreempt}
	if err := workers.NotifyControl(ch.ctl, ch.subj, w.ID(), msg); err != nil {
		t.Fatalf("NotifyControl: %v", err)
	}
	got := e.waitFor(j.ID, time.Second, "the preempted job to be requeued", func(j jobs.Job) bool {
		return j.State != jobs.StateRunning
	})
	seen := time.Since(asked)
	if time.Since(started) >= o.Heartbeat {
		t.Fatalf("the test was too slow to tell the control message from the first heartbeat")
	}
	t.Logf("preempted by control message: requeued %s after RequestPreempt+NotifyControl (observed by polling after %s); heartbeat %s",
		got.QueuedAt.Sub(asked).Round(time.Millisecond), seen.Round(time.Millisecond), o.Heartbeat)
	checkPreempted(t, e, rec, got, "reclaim for core")

	// A cancel is woken the same way.
	c := e.submit(e.shell(`echo started > "$BALLAST_PARAM_DIR/startedC"; while :; do sleep 0.05; done`), queues.QueueCore)
	e.waitFile("startedC", wait)
	if res, err := e.store.Cancel(ctx, c.ID); res != queues.CancelRequested || err != nil {
		t.Fatalf("Cancel = %v, %v", res, err)
	}
	if err := workers.NotifyControl(ch.ctl, ch.subj, w.ID(), workers.ControlMessage{JobID: c.ID, Attempt: 1, Action: workers.ControlCancel}); err != nil {
		t.Fatalf("NotifyControl: %v", err)
	}
	got = e.waitFor(c.ID, time.Second, "the cancel to stop the job", func(j jobs.Job) bool { return j.State.Terminal() })
	if got.State != jobs.StateCancelled {
		t.Fatalf("state %s error %q, want cancelled", got.State, got.LastError)
	}
	if time.Since(started) >= o.Heartbeat {
		t.Fatalf("the test was too slow to tell the control message from the first heartbeat")
	}

	// A message is only a wake-up: one without a request behind it stops nothing.
	d := e.submit(e.shell(`echo started > "$BALLAST_PARAM_DIR/startedD"; while [ ! -e "$BALLAST_PARAM_DIR/goD" ]; do sleep 0.02; done`), queues.QueueCore)
	e.waitFile("startedD", wait)
	woken := time.Now().Truncate(time.Millisecond)
	if err := workers.NotifyControl(ch.ctl, ch.subj, w.ID(), workers.ControlMessage{JobID: d.ID, Attempt: 1, Action: workers.ControlPreempt}); err != nil {
		t.Fatal(err)
	}
	// The woken beat shows in the registry while the job still runs (it
	// waits for goD), so the message was handled and found no request.
	testenv.Eventually(t, time.Second, "the control message to wake a heartbeat", func() bool {
		ws, err := registry.New(e.store).Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(ws) == 1 && !ws[0].LastBeat.Before(woken)
	})
	e.touch("goD")
	got = e.waitTerminal(d.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 1 || got.Preemptions != 0 {
		t.Fatalf("state %s attempt %d preemptions %d, want a bare message to change nothing", got.State, got.Attempt, got.Preemptions)
	}
}

func TestControlFollowsNewIdentity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	o, ch := e.withControl()
	o.ID = "ctl-fence"
	o.Slots = 2
	// Longer than the test: the fence is learned by the claim, and the stop
	// below can only come from the control message.
	o.Heartbeat = time.Minute
	// Beats this far apart would lapse any worker TTL: no self-fence.
	o.SelfFence = -1
	w := e.start(o)
	j := e.submit(e.checkpointing(), queues.QueueLoan)
	e.waitFile("started1", wait)

	// The controller declares the worker dead; its next claim (of attempt 2)
	// is refused, and it takes a new identity.
	ctrl := queues.NewStore(e.rdb, queues.StoreOptions{Namespace: e.ns,
		Now: func() time.Time { return time.Now().Add(time.Hour) }})
	if rec, err := ctrl.RecoverDeadWorkers(ctx, 10*time.Second); err != nil || len(rec) != 1 {
		t.Fatalf("RecoverDeadWorkers = %+v, %v", rec, err)
	}
	e.waitFile("started2", wait)
	got := e.waitFor(j.ID, wait, "attempt 2 to run under a new identity", func(j jobs.Job) bool {
		return j.State == jobs.StateRunning && j.Attempt == 2
	})
	if got.Worker != w.ID() || w.ID() == "ctl-fence" {
		t.Fatalf("attempt 2 runs on %q, the worker is %q; want a new identity", got.Worker, w.ID())
	}
	if n := o.Control.NumSubscriptions(); n != 1 {
		t.Errorf("%d control subscriptions, want only the new identity's", n)
	}

	asked := time.Now()
	if ok, err := e.store.RequestPreempt(ctx, j.ID, 2, queues.QueueBurst, "migrate"); !ok || err != nil {
		t.Fatalf("RequestPreempt = %v, %v", ok, err)
	}
	if err := workers.NotifyControl(ch.ctl, ch.subj, w.ID(), workers.ControlMessage{JobID: j.ID, Attempt: 2, Action: workers.ControlPreempt}); err != nil {
		t.Fatal(err)
	}
	got = e.waitFor(j.ID, 2*time.Second, "the new identity to act on the control message", func(j jobs.Job) bool {
		return j.State != jobs.StateRunning
	})
	t.Logf("preempted under the new identity %s in %s", w.ID(), got.QueuedAt.Sub(asked).Round(time.Millisecond))
	if got.State != jobs.StateQueued || got.Attempt != 3 || got.Queue != "burst" || got.Checkpoint != "c2" || got.Preemptions != 1 {
		t.Fatalf("state %s attempt %d queue %s checkpoint %q preemptions %d, want attempt 3 in burst from c2",
			got.State, got.Attempt, got.Queue, got.Checkpoint, got.Preemptions)
	}
}

func TestPreemptLosesToNaturalExit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	rec := &recorder{}
	o := e.options()
	o.Slots = 1
	// The job ends long before the first heartbeat could act on the request.
	o.Heartbeat = 5 * time.Second
	// Beats this far apart would lapse any worker TTL: no self-fence.
	o.SelfFence = -1
	o.Events = rec
	e.start(o)
	spec := e.shell(`
trap 'exit 3' TERM
echo started > "$BALLAST_PARAM_DIR/started"
while [ ! -e "$BALLAST_PARAM_DIR/go" ]; do sleep 0.01; done`)
	j := e.submit(spec, queues.QueueLoan)
	e.waitFile("started", wait)

	if ok, err := e.store.RequestPreempt(ctx, j.ID, 1, queues.QueueBurst, "reclaim"); !ok || err != nil {
		t.Fatalf("RequestPreempt = %v, %v", ok, err)
	}
	e.touch("go")
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 1 || got.Preemptions != 0 || got.Requeues != 0 || code(got) != "0" {
		t.Fatalf("state %s attempt %d preemptions %d requeues %d exit %s, want the natural success to win",
			got.State, got.Attempt, got.Preemptions, got.Requeues, code(got))
	}
	if p := e.preemptField(j.ID); p != "" {
		t.Errorf("the preempt request %q survived the finish", p)
	}
	if n := e.queueSize(queues.QueueBurst); n != 0 {
		t.Errorf("burst holds %d tasks, want none", n)
	}
	if evs := rec.find(j.ID, events.TypeJobRequeued); len(evs) != 0 {
		t.Errorf("requeued events %+v for a job that finished", evs)
	}
}
