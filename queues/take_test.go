package queues_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

var alice = queues.Claimant{Worker: "w1", Incarnation: "aaaa", Pool: "fixed"}

var takes atomic.Int64

// take is one take of up to n from qs by c, under a token of its own.
func take(ctx context.Context, s *queues.Store, qs []queues.Queue, c queues.Claimant, n int) (queues.Took, error) {
	return s.Take(ctx, queues.TakeRequest{Queues: qs, Claimant: c, Max: n, Token: fmt.Sprint("t", takes.Add(1))})
}

// TestTakeReadsWhatAsynqWrites: Take claims tasks the submit script wrote
// and tasks asynq's own client enqueued alike (a retry's next attempt,
// delayed), forwards the delayed one when it is due, and leaves nothing of
// them that asynq's Inspector can see. An asynq upgrade that changes the
// layout of the pending list, the schedule or the task fails here.
func TestTakeReadsWhatAsynqWrites(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	a, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	took, err := take(ctx, s, []queues.Queue{queues.QueueCore}, alice, 1)
	if err != nil || len(took.Jobs) != 1 || took.Jobs[0].ID != a.Job.ID {
		t.Fatalf("first take: %+v %v; want %s (first in, first out)", took, err, a.Job.ID)
	}
	j := took.Jobs[0]
	if j.State != jobs.StateRunning || j.Worker != "w1" || j.Pool != "fixed" || j.Attempt != 1 || j.Runs != 1 ||
		j.Spec.Template != "t" || j.StartedAt.IsZero() {
		t.Fatalf("taken job %+v", j)
	}
	rec, err := s.Get(ctx, j.ID)
	if err != nil || rec.State != jobs.StateRunning || rec.Worker != "w1" || rec.Pool != "fixed" || !rec.StartedAt.Equal(j.StartedAt) {
		t.Fatalf("record after take: %+v %v", rec, err)
	}
	// A retry: its next attempt goes through asynq.Client, delayed.
	if _, err := s.Requeue(ctx, j, "w1", queues.Requeue{Retry: true, NotBefore: c.Now().Add(time.Minute), Reason: "exit 1"}); err != nil {
		t.Fatal(err)
	}
	took, err = take(ctx, s, []queues.Queue{queues.QueueCore}, alice, 10)
	if err != nil || len(took.Jobs) != 1 || took.Jobs[0].ID != b.Job.ID {
		t.Fatalf("second take: %+v %v; want only %s (the retry is not due)", took, err, b.Job.ID)
	}
	if n, err := s.ForwardDue(ctx, []queues.Queue{queues.QueueCore}); err != nil || n != 0 {
		t.Fatalf("forwarded %d (%v) before the retry was due", n, err)
	}
	c.Add(2 * time.Minute)
	if n, err := s.ForwardDue(ctx, []queues.Queue{queues.QueueCore}); err != nil || n != 1 {
		t.Fatalf("forwarded %d (%v), want the due retry", n, err)
	}
	insp := asynq.NewInspectorFromRedisClient(s.Redis())
	qname := s.Namespace().AsynqQueue(queues.QueueCore)
	ti, err := insp.GetTaskInfo(qname, queues.TaskID(a.Job.ID, 2))
	if err != nil || ti.State != asynq.TaskStatePending {
		t.Fatalf("the forwarded retry as asynq sees it: %+v %v", ti, err)
	}
	took, err = take(ctx, s, []queues.Queue{queues.QueueCore}, alice, 10)
	if err != nil || len(took.Jobs) != 1 || took.Jobs[0].ID != a.Job.ID || took.Jobs[0].Attempt != 2 || took.Jobs[0].Runs != 2 {
		t.Fatalf("third take: %+v %v; want attempt 2 of %s", took, err, a.Job.ID)
	}
	qi, err := insp.GetQueueInfo(qname)
	if err != nil {
		t.Fatal(err)
	}
	if qi.Size != 0 || qi.Pending != 0 || qi.Active != 0 || qi.Scheduled != 0 || qi.Retry != 0 {
		t.Fatalf("asynq still holds tasks after every take: %+v", qi)
	}
	for _, id := range []string{queues.TaskID(a.Job.ID, 1), queues.TaskID(a.Job.ID, 2), queues.TaskID(b.Job.ID, 1)} {
		if _, err := insp.GetTaskInfo(qname, id); !errors.Is(err, asynq.ErrTaskNotFound) {
			t.Fatalf("task %s left behind: %v", id, err)
		}
	}
	// Taken jobs end as claimed ones do.
	if ok, err := s.Finish(ctx, took.Jobs[0], "w1", jobs.StateSucceeded, nil, ""); !ok || err != nil {
		t.Fatalf("finish of a taken job: %v %v", ok, err)
	}
}

// TestTakeInPriorityOrder: the first queue is emptied first, a queue
// asynq marks paused is passed over, and one take gets as many as asked
// for across queues.
func TestTakeInPriorityOrder(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	var core, loan []string
	for range 2 {
		x, _ := s.Submit(ctx, spec(""), queues.QueueCore)
		y, _ := s.Submit(ctx, spec(""), queues.QueueLoan)
		core, loan = append(core, x.Job.ID), append(loan, y.Job.ID)
	}
	qs := []queues.Queue{queues.QueueCore, queues.QueueLoan}
	insp := asynq.NewInspectorFromRedisClient(s.Redis())
	if err := insp.PauseQueue(s.Namespace().AsynqQueue(queues.QueueCore)); err != nil {
		t.Fatal(err)
	}
	took, err := take(ctx, s, qs, alice, 1)
	if err != nil || len(took.Jobs) != 1 || took.Jobs[0].ID != loan[0] {
		t.Fatalf("take with core paused: %+v %v; want %s", took, err, loan[0])
	}
	if err := insp.UnpauseQueue(s.Namespace().AsynqQueue(queues.QueueCore)); err != nil {
		t.Fatal(err)
	}
	took, err = take(ctx, s, qs, alice, 3)
	if err != nil || len(took.Jobs) != 3 {
		t.Fatalf("take of 3: %+v %v", took, err)
	}
	want := []string{core[0], core[1], loan[1]}
	for i, j := range took.Jobs {
		if j.ID != want[i] {
			t.Fatalf("take %d got %s, want %s (core before loan)", i, j.ID, want[i])
		}
	}
	if took, err := take(ctx, s, qs, alice, 3); err != nil || len(took.Jobs) != 0 || took.Dropped != 0 {
		t.Fatalf("take from empty queues: %+v %v", took, err)
	}
}

// TestTakeDropsStaleDeliveries: a cancelled job's task and a moved
// attempt's old task (left where their best-effort deletes failed) are
// popped and dropped, never claimed; garbage in the list is dropped too.
// The current attempt is taken.
func TestTakeDropsStaleDeliveries(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	gone, _ := s.Submit(ctx, spec(""), queues.QueueBurst)
	if _, err := s.Cancel(ctx, gone.Job.ID); err != nil {
		t.Fatal(err)
	}
	moved, _ := s.Submit(ctx, spec(""), queues.QueueBurst)
	if _, err := s.Move(ctx, moved.Job.ID, 1, queues.QueueBurst, "test"); err != nil {
		t.Fatal(err)
	}
	qname := s.Namespace().AsynqQueue(queues.QueueBurst)
	// The old tasks, as if their best-effort deletes had failed, and garbage.
	if err := s.Redis().LPush(ctx, "asynq:{"+qname+"}:pending", queues.TaskID(gone.Job.ID, 1), queues.TaskID(moved.Job.ID, 1),
		"not-a-task-id").Err(); err != nil {
		t.Fatal(err)
	}
	took, err := take(ctx, s, []queues.Queue{queues.QueueBurst}, alice, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(took.Jobs) != 1 || took.Jobs[0].ID != moved.Job.ID || took.Jobs[0].Attempt != 2 || took.Dropped != 3 {
		t.Fatalf("took %+v; want attempt 2 of %s and 3 dropped", took, moved.Job.ID)
	}
	if got, _ := s.Get(ctx, gone.Job.ID); got.State != jobs.StateCancelled {
		t.Fatalf("the cancelled job is %s", got.State)
	}
}

// TestTakeFencedTakesNothing: an identity another incarnation holds, or
// one the controller declared dead, takes nothing, and its deliveries stay
// for other workers.
func TestTakeFencedTakesNothing(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	if _, err := s.Register(ctx, queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "bbbb"}); err != nil {
		t.Fatal(err)
	}
	sub, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	if _, err := take(ctx, s, []queues.Queue{queues.QueueCore}, alice, 1); !errors.Is(err, queues.ErrFenced) {
		t.Fatalf("take by a superseded incarnation: %v, want ErrFenced", err)
	}
	if n := pending(t, s, queues.QueueCore); n != 1 {
		t.Fatalf("pending after a fenced take = %d, want 1", n)
	}
	if got, _ := s.Get(ctx, sub.Job.ID); got.State != jobs.StateQueued {
		t.Fatalf("job is %s after a fenced take", got.State)
	}
	bob := queues.Claimant{Worker: "w1", Incarnation: "bbbb", Pool: "fixed"}
	if took, err := take(ctx, s, []queues.Queue{queues.QueueCore}, bob, 1); err != nil || len(took.Jobs) != 1 {
		t.Fatalf("take by the registered incarnation: %+v %v", took, err)
	}
}

// TestTakeRefusedOnSeparateEnqueue: a store whose tasks asynq's client
// writes (Redis Cluster) says so instead of taking.
func TestTakeRefusedOnSeparateEnqueue(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	sep := queues.NewStore(s.Redis(), queues.StoreOptions{Namespace: s.Namespace().Name(), SeparateEnqueue: true})
	if sep.CanTake() || !s.CanTake() {
		t.Fatalf("CanTake: separate %v, inline %v", sep.CanTake(), s.CanTake())
	}
	if _, err := take(context.Background(), sep, []queues.Queue{queues.QueueCore}, alice, 1); err == nil {
		t.Fatal("a separate-enqueue store took deliveries")
	}
}

// TestARetriedTakeIsAnsweredAgain: a take commits but its reply never
// reaches the worker. Its retry, under the same token, gets what that try
// claimed, as claimed, and takes nothing more; a retry whose first try
// never ran takes as a first try would, unless it asks only for the
// answer.
func TestARetriedTakeIsAnsweredAgain(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	a, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	b, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	req := queues.TakeRequest{Queues: []queues.Queue{queues.QueueCore}, Claimant: alice, Max: 1, Token: "lost-reply"}
	first, err := s.Take(ctx, req)
	if err != nil || len(first.Jobs) != 1 || first.Jobs[0].ID != a.Job.ID {
		t.Fatalf("first try: %+v %v", first, err) // the reply the worker never saw
	}
	req.Retry = true
	c.Add(time.Minute) // long after the first try: the retry holds it again from now
	again, err := s.Take(ctx, req)
	if err != nil || len(again.Jobs) != 1 || again.Jobs[0].ID != a.Job.ID || again.Jobs[0].State != jobs.StateRunning ||
		again.Jobs[0].Runs != 1 || again.Jobs[0].Worker != "w1" || !again.Jobs[0].StartedAt.Equal(first.Jobs[0].StartedAt) {
		t.Fatalf("retry: %+v %v; want %s again, as claimed", again, err, a.Job.ID)
	}
	if bt, _ := s.Heartbeat(ctx, queues.WorkerInfo{ID: alice.Worker, Incarnation: alice.Incarnation}, nil); len(bt.Unrecorded) != 0 {
		t.Fatalf("a beat named an attempt a take's retry holds again: %+v", bt.Unrecorded)
	}
	if got, _ := s.Get(ctx, b.Job.ID); got.State != jobs.StateQueued {
		t.Fatalf("the retry took %s too (%s)", b.Job.ID, got.State)
	}
	only := queues.TakeRequest{Queues: req.Queues, Claimant: alice, Max: 1, Token: "never-ran", Retry: true, AgainOnly: true}
	if took, err := s.Take(ctx, only); err != nil || len(took.Jobs) != 0 {
		t.Fatalf("an answer-only retry of a try that never ran took %+v (%v); want nothing", took, err)
	}
	fresh := queues.TakeRequest{Queues: req.Queues, Claimant: alice, Max: 1, Token: "never-ran", Retry: true}
	took, err := s.Take(ctx, fresh)
	if err != nil || len(took.Jobs) != 1 || took.Jobs[0].ID != b.Job.ID || took.Jobs[0].Runs != 1 {
		t.Fatalf("a retry whose first try never ran: %+v %v; want %s", took, err, b.Job.ID)
	}
}
