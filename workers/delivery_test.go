package workers_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/queues/usage"
)

func TestStrictPriorityCoreBeforeLoan(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var core, loan []jobs.Job
	// Interleaved, loan first: only the queue may decide the order.
	for i := 1; i <= 3; i++ {
		for _, q := range []queues.Queue{queues.QueueLoan, queues.QueueCore} {
			spec := e.shell(`echo "$BALLAST_PARAM_NAME" >> "$BALLAST_PARAM_DIR/order"`)
			spec.Params["name"] = fmt.Sprintf("%s-%d", q, i)
			j := e.submit(spec, q)
			if q == queues.QueueCore {
				core = append(core, j)
			} else {
				loan = append(loan, j)
			}
		}
	}
	o := e.options()
	o.Slots = 1
	e.start(o)

	var lastCore, firstLoan time.Time
	for _, j := range core {
		got := e.waitTerminal(j.ID, wait)
		if got.State != jobs.StateSucceeded {
			t.Fatalf("core job %s: %s %q", j.ID, got.State, got.LastError)
		}
		if got.StartedAt.After(lastCore) {
			lastCore = got.StartedAt
		}
	}
	for _, j := range loan {
		got := e.waitTerminal(j.ID, wait)
		if got.State != jobs.StateSucceeded {
			t.Fatalf("loan job %s: %s %q", j.ID, got.State, got.LastError)
		}
		if firstLoan.IsZero() || got.StartedAt.Before(firstLoan) {
			firstLoan = got.StartedAt
		}
	}
	if firstLoan.Before(lastCore) {
		t.Errorf("a loan job started at %v, before the last core job at %v", firstLoan, lastCore)
	}
	order := strings.Fields(e.read("order"))
	want := []string{"core-1", "core-2", "core-3", "loan-1", "loan-2", "loan-3"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("run order %v, want %v", order, want)
	}
}

// asynqQueue reads asynq's view of a logical queue of the test's namespace.
func (e *env) asynqQueue(q queues.Queue) *asynq.QueueInfo {
	e.t.Helper()
	info, err := asynq.NewInspectorFromRedisClient(e.rdb).GetQueueInfo(e.store.Namespace().AsynqQueue(q))
	if err != nil {
		e.t.Fatalf("queue info: %v", err)
	}
	return info
}

func TestStaleDeliveryIsDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	j := e.submit(e.shell(`echo "$BALLAST_ATTEMPT" >> "$BALLAST_PARAM_DIR/runs"`), queues.QueueCore)

	// Another actor takes attempt 1 and moves the job on to attempt 2; the
	// task of attempt 1 stays in the queue.
	claimed, ok, err := e.store.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: 1}, "someone-else")
	if err != nil || !ok {
		t.Fatalf("Claim: ok=%v err=%v", ok, err)
	}
	moved, err := e.store.Requeue(ctx, claimed, "someone-else", queues.Requeue{Reason: "moved by the test"})
	if err != nil || moved.Attempt != 2 {
		t.Fatalf("Requeue = %+v, %v; want attempt 2", moved, err)
	}
	if n := e.asynqQueue(queues.QueueCore).Pending; n != 2 {
		t.Fatalf("%d pending tasks, want the stale attempt 1 and attempt 2", n)
	}

	o := e.options()
	o.Slots = 2
	w := e.start(o)
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 2 || got.Worker != w.ID() {
		t.Fatalf("state %s attempt %d worker %q, want attempt 2 succeeded here", got.State, got.Attempt, got.Worker)
	}
	// The stale task is revoked: not retried, not archived.
	testenv.Eventually(t, wait, "the queue to be empty", func() bool {
		i := e.asynqQueue(queues.QueueCore)
		return i.Size == 0 && i.Retry == 0 && i.Archived == 0 && i.Active == 0
	})
	if runs := e.read("runs"); runs != "2\n" {
		t.Fatalf("runs %q, want attempt 2 to run exactly once", runs)
	}

	// A redelivery of the attempt that already ran is dropped too.
	client := asynq.NewClientFromRedisClient(e.rdb)
	_, err = client.Enqueue(asynq.NewTask(queues.TaskType, queues.Delivery{JobID: j.ID, Attempt: 2}.Encode()),
		asynq.Queue(e.store.Namespace().AsynqQueue(queues.QueueCore)), asynq.Retention(0))
	if err != nil {
		t.Fatalf("enqueue a duplicate delivery: %v", err)
	}
	testenv.Eventually(t, wait, "the duplicate delivery to be consumed", func() bool {
		i := e.asynqQueue(queues.QueueCore)
		return i.Size == 0 && i.Retry == 0 && i.Archived == 0 && i.Active == 0
	})
	if runs := e.read("runs"); runs != "2\n" {
		t.Errorf("runs %q after a duplicate delivery, want one run", runs)
	}
	if again := e.get(j.ID); again.State != jobs.StateSucceeded || again.Attempt != 2 || !again.FinishedAt.Equal(got.FinishedAt) {
		t.Errorf("the record changed after a duplicate delivery: %+v", again)
	}
}

func TestFencedWorkerStopsJobUnrecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	o := e.options()
	o.ID = "fence-w"
	o.Slots = 1
	w := e.start(o)
	spec := e.shell(`
if [ "$BALLAST_ATTEMPT" = 1 ]; then
  trap 'echo "{\"checkpoint\":\"from-fenced\"}"; echo term > "$BALLAST_PARAM_DIR/term1"; exit 7' TERM
  echo $$ > "$BALLAST_PARAM_DIR/started1.tmp"; mv "$BALLAST_PARAM_DIR/started1.tmp" "$BALLAST_PARAM_DIR/started1"
  while :; do sleep 0.05; done
fi
echo "[$BALLAST_RESUME_FROM]" > "$BALLAST_PARAM_DIR/resume2.tmp"; mv "$BALLAST_PARAM_DIR/resume2.tmp" "$BALLAST_PARAM_DIR/resume2"
while [ ! -e "$BALLAST_PARAM_DIR/go" ]; do sleep 0.02; done`)
	spec.Checkpointable = true
	j := e.submit(spec, queues.QueueCore)
	pid1 := e.waitFile("started1", wait)
	// A few heartbeats in, so the identity's life has a length to bill.
	testenv.Eventually(t, wait, "a heartbeat 300 ms after the start", func() bool {
		ws, err := registry.New(e.store).Workers(ctx)
		return err == nil && len(ws) == 1 && ws[0].LastBeat.Sub(ws[0].StartedAt) > 300*time.Millisecond
	})

	// The controller's clock is an hour ahead: this live worker looks dead.
	ctrl := queues.NewStore(e.rdb, queues.StoreOptions{Namespace: e.ns,
		Now: func() time.Time { return time.Now().Add(time.Hour) }})
	rec, err := ctrl.RecoverDeadWorkers(ctx, 10*time.Second)
	if err != nil {
		t.Fatalf("RecoverDeadWorkers: %v", err)
	}
	if len(rec) != 1 || rec[0].JobID != j.ID || rec[0].Attempt != 2 || rec[0].Worker != "fence-w" {
		t.Fatalf("recovered %+v, want job %s as attempt 2 from fence-w", rec, j.ID)
	}
	// Attempt 2 is queued (the worker may already have picked it up once
	// its heartbeat let go of attempt 1, but never under the fenced name).
	if got := e.get(j.ID); got.Attempt != 2 || got.Worker == "fence-w" ||
		(got.State != jobs.StateQueued && got.State != jobs.StateRunning) {
		t.Fatalf("after recovery: state %s attempt %d worker %q, want attempt 2 queued", got.State, got.Attempt, got.Worker)
	}

	// The next heartbeat learns of the fence and kills attempt 1 outright:
	// it may already run elsewhere, and a checkpoint it wrote on SIGTERM
	// could not be recorded, so a grace period would only let it overlap.
	testenv.Eventually(t, 2*time.Second, "the fenced attempt's process to be killed", func() bool { return !alive(t, pid1) })
	got := e.waitFor(j.ID, wait, "attempt 2 to run under a new identity", func(j jobs.Job) bool {
		return j.State == jobs.StateRunning && j.Attempt == 2
	})
	if got.Worker != w.ID() || w.ID() == "fence-w" || !strings.HasPrefix(w.ID(), "fence-w-") {
		t.Errorf("attempt 2 runs on %q, the worker is now %q; want a fresh identity derived from fence-w", got.Worker, w.ID())
	}
	// Nothing of the fenced attempt was recorded: neither its exit code 7
	// nor the checkpoint it printed on SIGTERM.
	if got.ExitCode != nil || got.Checkpoint != "" {
		t.Errorf("the fenced attempt left exit %s checkpoint %q in the record", code(got), got.Checkpoint)
	}
	if r := e.waitFile("resume2", wait); r != "[]\n" {
		t.Errorf("attempt 2 resumed from %q, want nothing", r)
	}
	// The fenced name stays out of the registry; the new one beats.
	var ids []string
	testenv.Eventually(t, wait, "the worker to register under its new identity", func() bool {
		ws, err := registry.New(e.store).Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = ids[:0]
		for _, x := range ws {
			ids = append(ids, x.ID)
		}
		return len(ids) > 0
	})
	if len(ids) != 1 || ids[0] != w.ID() {
		t.Errorf("registry holds %v, want only %q", ids, w.ID())
	}

	e.touch("go")
	got = e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 2 || got.Requeues != 1 || got.Worker != w.ID() {
		t.Fatalf("state %s attempt %d requeues %d worker %q, want attempt 2 succeeded on %q",
			got.State, got.Attempt, got.Requeues, got.Worker, w.ID())
	}
	if _, err := os.Stat(e.path("term1")); err == nil {
		t.Errorf("the fenced attempt was sent SIGTERM and given a grace period; it should have been killed at once")
	}
	// Billing: the fenced identity's life ended at its last heartbeat, and
	// the new one's starts at the re-registration, not at the process's
	// start: no stretch of the process is billed twice.
	lives, err := usage.New(e.store).WorkerLives(ctx, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]usage.WorkerLife{}
	for _, l := range lives {
		byID[l.ID] = l
	}
	old, cur := byID["fence-w"], byID[w.ID()]
	if len(lives) != 2 || old.End.IsZero() || cur.Start.Before(old.End) || !cur.End.IsZero() {
		t.Errorf("lives %+v: want fence-w ended before %s began", lives, w.ID())
	}
}
