package queues_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// field reads one raw field of a job record, for fields jobs.Job does not
// carry (last_move, the preempt request).
func field(t *testing.T, s *queues.Store, id, name string) string {
	t.Helper()
	v, err := s.Redis().HGet(context.Background(), s.Namespace().Job(id), name).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("HGET %s %s: %v", id, name, err)
	}
	return v
}

// queueInfo is asynq's view of one logical queue of s's namespace.
func queueInfo(t *testing.T, s *queues.Store, q queues.Queue) *asynq.QueueInfo {
	t.Helper()
	info, err := asynq.NewInspectorFromRedisClient(s.Redis()).GetQueueInfo(s.Namespace().AsynqQueue(q))
	if err != nil {
		t.Fatalf("queue info %s: %v", q, err)
	}
	return info
}

func TestMoveIsFenced(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, spec(""), queues.QueueBurst)
	if n, err := s.Move(ctx, sub.Job.ID, 2, queues.QueueLoan, "lend"); n != 0 || err != nil {
		t.Fatalf("Move at a wrong attempt = %d, %v; want 0, nil", n, err)
	}
	if _, err := s.Move(ctx, sub.Job.ID, 1, "nowhere", "lend"); err == nil {
		t.Fatal("Move to an unknown queue succeeded")
	}
	if _, ok, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w"); !ok {
		t.Fatal("claim failed")
	}
	if n, err := s.Move(ctx, sub.Job.ID, 1, queues.QueueLoan, "lend"); n != 0 || err != nil {
		t.Fatalf("Move of a running job = %d, %v; want 0, nil", n, err)
	}
	if n, err := s.Move(ctx, "no-such-job", 1, queues.QueueLoan, "lend"); n != 0 || err != nil {
		t.Fatalf("Move of a missing job = %d, %v; want 0, nil", n, err)
	}
	got, _ := s.Get(ctx, sub.Job.ID)
	if got.State != jobs.StateRunning || got.Attempt != 1 || got.Queue != "burst" || field(t, s, got.ID, "last_move") != "" {
		t.Fatalf("a refused move changed the record: %+v last_move %q", got, field(t, s, got.ID, "last_move"))
	}
}

func TestMoveSendsTheJobToTheTargetQueue(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, spec(""), queues.QueueBurst)
	n, err := s.Move(ctx, sub.Job.ID, 1, queues.QueueLoan, "lend: fixed at 30%")
	if err != nil || n != 2 {
		t.Fatalf("Move = %d, %v; want attempt 2", n, err)
	}
	if p := pending(t, s, queues.QueueLoan); p != 1 {
		t.Errorf("loan holds %d tasks, want 1", p)
	}
	if p := pending(t, s, queues.QueueBurst); p != 0 {
		t.Errorf("burst still holds %d tasks, want the old one deleted", p)
	}
	got, _ := s.Get(ctx, sub.Job.ID)
	if got.State != jobs.StateQueued || got.Attempt != 2 || got.Queue != "loan" || got.LastError != "" ||
		got.Requeues != 0 || !got.QueuedAt.Equal(sub.Job.QueuedAt) {
		t.Errorf("after the move: %+v", got)
	}
	if m := field(t, s, got.ID, "last_move"); m != "lend: fixed at 30%" {
		t.Errorf("last_move %q", m)
	}
	// A delivery of the old attempt fetched before the delete is dropped.
	if _, ok, _ := s.Claim(ctx, queues.Delivery{JobID: got.ID, Attempt: 1}, "w"); ok {
		t.Fatal("the old attempt was claimed after the move")
	}
	// Moving it back (unlend) works the same way, fenced on the new attempt.
	if n, _ := s.Move(ctx, got.ID, 1, queues.QueueBurst, "unlend"); n != 0 {
		t.Fatalf("a second move with the old attempt moved it (%d)", n)
	}
	if n, err := s.Move(ctx, got.ID, 2, queues.QueueBurst, "unlend"); n != 3 || err != nil {
		t.Fatalf("unlend = %d, %v; want attempt 3", n, err)
	}
	if l, b := pending(t, s, queues.QueueLoan), pending(t, s, queues.QueueBurst); l != 0 || b != 1 {
		t.Fatalf("after unlend: loan %d burst %d, want 0 and 1", l, b)
	}
	if _, ok, _ := s.Claim(ctx, queues.Delivery{JobID: got.ID, Attempt: 3}, "w"); !ok {
		t.Fatal("the moved attempt is not claimable")
	}
}

func TestMoveKeepsNotBefore(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, spec(""), queues.QueueBurst)
	j, _, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w")
	later := c.Now().Add(time.Hour)
	if r, _ := s.Requeue(ctx, j, "w", queues.Requeue{Retry: true, NotBefore: later, Reason: "exit 1"}); r.Attempt != 2 {
		t.Fatalf("retry: %+v", r)
	}
	if n, err := s.Move(ctx, j.ID, 2, queues.QueueLoan, "lend"); n != 3 || err != nil {
		t.Fatalf("Move = %d, %v", n, err)
	}
	// Attempt 1's task is still in burst (this test never dequeued it);
	// attempt 2's scheduled one must be gone.
	_, err := asynq.NewInspectorFromRedisClient(s.Redis()).GetTaskInfo(
		s.Namespace().AsynqQueue(queues.QueueBurst), queues.TaskID(j.ID, 2))
	if !errors.Is(err, asynq.ErrTaskNotFound) {
		t.Errorf("the moved attempt's task in burst: %v, want not found", err)
	}
	if l := queueInfo(t, s, queues.QueueLoan); l.Scheduled != 1 || l.Pending != 0 {
		t.Errorf("loan: %d scheduled %d pending, want the back-off kept (1 scheduled)", l.Scheduled, l.Pending)
	}
	got, _ := s.Get(ctx, j.ID)
	if !got.NotBefore.Equal(later.UTC().Truncate(time.Millisecond)) || got.LastError != "exit 1" || got.Retries != 1 {
		t.Errorf("after the move: not_before %v error %q retries %d", got.NotBefore, got.LastError, got.Retries)
	}
}

// TestAGangHandOverKeepsAPendingPreemption: a member's worker that drains
// asks member 0 to move the gang; a preemption the controller already
// asked for stands, with its queue and reason, and the hand-over reports
// that one stands. Without one it asks for a move to the job's queue.
func TestAGangHandOverKeepsAPendingPreemption(t *testing.T) {
	t.Parallel()
	s, _, j, _, _ := gangOnRecord(t)
	ctx, id := context.Background(), j.ID
	if ok, err := s.RequestGangHandOver(ctx, id, j.Attempt, queues.QueueCore, "member 1's worker w1 draining"); !ok || err != nil {
		t.Fatalf("hand-over with none pending = %v, %v", ok, err)
	}
	if q, why := field(t, s, id, "preempt"), field(t, s, id, "preempt_reason"); q != "core" || why != "member 1's worker w1 draining" {
		t.Fatalf("hand-over recorded %q %q", q, why)
	}
	if ok, err := s.RequestPreempt(ctx, id, j.Attempt, queues.QueueBurst, "migrate"); !ok || err != nil {
		t.Fatalf("RequestPreempt = %v, %v", ok, err)
	}
	if ok, err := s.RequestGangHandOver(ctx, id, j.Attempt, queues.QueueCore, "member 1's worker w1 draining"); !ok || err != nil {
		t.Fatalf("hand-over with one pending = %v, %v", ok, err)
	}
	if q, why := field(t, s, id, "preempt"), field(t, s, id, "preempt_reason"); q != "burst" || why != "migrate" {
		t.Fatalf("the controller's preemption became %q %q, want it kept", q, why)
	}
	if ok, _ := s.RequestGangHandOver(ctx, id, j.Attempt+1, queues.QueueCore, "x"); ok {
		t.Fatal("a hand-over of an attempt that is not running was recorded")
	}
}

func TestRequestPreempt(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, spec(""), queues.QueueLoan)
	if ok, err := s.RequestPreempt(ctx, sub.Job.ID, 1, queues.QueueBurst, "reclaim"); ok || err != nil {
		t.Fatalf("preempt of a queued job = %v, %v; want false", ok, err)
	}
	j, _, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w")
	if ok, _ := s.RequestPreempt(ctx, j.ID, 2, queues.QueueBurst, "reclaim"); ok {
		t.Fatal("preempt at a wrong attempt recorded")
	}
	if _, err := s.RequestPreempt(ctx, j.ID, 1, "nowhere", "reclaim"); err == nil {
		t.Fatal("preempt to an unknown queue accepted")
	}
	running := []queues.Delivery{{JobID: j.ID, Attempt: 1}}
	if b, _ := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w"}, running); len(b.Preempt) != 0 {
		t.Fatalf("heartbeat reported a preempt nobody asked for: %+v", b)
	}
	if ok, err := s.RequestPreempt(ctx, j.ID, 1, queues.QueueBurst, "reclaim for core"); !ok || err != nil {
		t.Fatalf("RequestPreempt = %v, %v", ok, err)
	}
	b, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w"}, running)
	if err != nil || len(b.Preempt) != 1 || b.Preempt[0] != j.ID || len(b.Cancel)+len(b.Lost) != 0 {
		t.Fatalf("heartbeat %+v %v, want one preempt", b, err)
	}
	if ok, _ := s.Checkpoint(ctx, j, "w", "c1"); !ok {
		t.Fatal("checkpoint not recorded")
	}
	r, err := s.Requeue(ctx, j, "w", queues.Requeue{Preempt: true})
	if err != nil || r.Attempt != 2 || r.Queue != queues.QueueBurst || r.Reason != "preempted: reclaim for core" || r.Cancelled {
		t.Fatalf("Requeue = %+v, %v", r, err)
	}
	got, _ := s.Get(ctx, j.ID)
	if got.State != jobs.StateQueued || got.Attempt != 2 || got.Queue != "burst" || got.Checkpoint != "c1" ||
		got.Preemptions != 1 || got.Requeues != 0 || got.Retries != 0 || got.LastError != "" {
		t.Fatalf("after the preemption: %+v", got)
	}
	for _, f := range []string{"preempt", "preempt_reason"} {
		if v := field(t, s, j.ID, f); v != "" {
			t.Errorf("%s = %q after the preemption, want it cleared", f, v)
		}
	}
	if m := field(t, s, j.ID, "last_move"); m != "preempted: reclaim for core" {
		t.Errorf("last_move %q", m)
	}
	if l, b := pending(t, s, queues.QueueLoan), pending(t, s, queues.QueueBurst); l != 1 || b != 1 {
		// loan: attempt 1's task, never dequeued in this test.
		t.Errorf("loan %d burst %d tasks, want 1 and 1", l, b)
	}
	// The ended attempt can no longer be preempted; the new one, once running, can.
	if ok, _ := s.RequestPreempt(ctx, j.ID, 1, queues.QueueBurst, "again"); ok {
		t.Fatal("preempt of an ended attempt recorded")
	}
}

func TestCancelOutranksPreempt(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, spec(""), queues.QueueLoan)
	j, _, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w")
	if ok, _ := s.RequestPreempt(ctx, j.ID, 1, queues.QueueBurst, "reclaim"); !ok {
		t.Fatal("RequestPreempt refused")
	}
	if res, _ := s.Cancel(ctx, j.ID); res != queues.CancelRequested {
		t.Fatalf("Cancel = %v", res)
	}
	b, _ := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w"}, []queues.Delivery{{JobID: j.ID, Attempt: 1}})
	if len(b.Cancel) != 1 || len(b.Preempt) != 0 {
		t.Fatalf("heartbeat %+v, want the cancel only", b)
	}
	if ok, _ := s.RequestPreempt(ctx, j.ID, 1, queues.QueueBurst, "reclaim"); ok {
		t.Fatal("a preempt was accepted while a cancel is pending")
	}
	r, err := s.Requeue(ctx, j, "w", queues.Requeue{Preempt: true})
	if err != nil || !r.Cancelled {
		t.Fatalf("Requeue of a preempted job with a cancel pending = %+v, %v; want cancelled", r, err)
	}
	got, _ := s.Get(ctx, j.ID)
	if got.State != jobs.StateCancelled || got.Preemptions != 0 || field(t, s, j.ID, "preempt") != "" {
		t.Fatalf("after the cancel: %+v preempt %q", got, field(t, s, j.ID, "preempt"))
	}
}

func TestFinishDropsPreemptRequest(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, spec(""), queues.QueueLoan)
	j, _, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w")
	if ok, _ := s.RequestPreempt(ctx, j.ID, 1, queues.QueueBurst, "reclaim"); !ok {
		t.Fatal("RequestPreempt refused")
	}
	code := 0
	if ok, err := s.Finish(ctx, j, "w", jobs.StateSucceeded, &code, ""); !ok || err != nil {
		t.Fatalf("Finish = %v, %v", ok, err)
	}
	if r, _ := s.Requeue(ctx, j, "w", queues.Requeue{Preempt: true}); r.Attempt != 0 {
		t.Fatalf("a finished job was requeued: %+v", r)
	}
	got, _ := s.Get(ctx, j.ID)
	if got.State != jobs.StateSucceeded || got.Preemptions != 0 || field(t, s, j.ID, "preempt") != "" ||
		field(t, s, j.ID, "preempt_reason") != "" {
		t.Fatalf("after finish: %+v", got)
	}
}

func TestRecoveryHonoursPreemptTarget(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, spec(""), queues.QueueLoan)
	j, _, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "gone")
	s.Heartbeat(ctx, queues.WorkerInfo{ID: "gone"}, []queues.Delivery{{JobID: j.ID, Attempt: 1}})
	if ok, _ := s.RequestPreempt(ctx, j.ID, 1, queues.QueueBurst, "reclaim"); !ok {
		t.Fatal("RequestPreempt refused")
	}
	c.Add(time.Minute)
	rec, err := s.RecoverDeadWorkers(ctx, 5*time.Second)
	if err != nil || len(rec) != 1 || rec[0].Queue != "burst" {
		t.Fatalf("recovered %+v (%v), want the job sent to burst", rec, err)
	}
	got, _ := s.Get(ctx, j.ID)
	if got.Queue != "burst" || got.Attempt != 2 || got.Requeues != 1 || got.Preemptions != 0 || field(t, s, j.ID, "preempt") != "" {
		t.Fatalf("after recovery: %+v preempt %q", got, field(t, s, j.ID, "preempt"))
	}
	if b := pending(t, s, queues.QueueBurst); b != 1 {
		t.Fatalf("burst holds %d tasks, want 1", b)
	}
}
