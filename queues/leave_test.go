package queues_test

import (
	"context"
	"testing"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestLeaveRequeuesWhatTheWorkerNeverRan: a worker that stops with an
// attempt still on record as its own (a take that committed while Redis
// failed it, unresolved when the worker stopped) requeues it as it leaves
// the registry; nothing else would, since recovery looks only at
// registered workers. A superseded process of the same ID leaves nothing.
func TestLeaveRequeuesWhatTheWorkerNeverRan(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	me := queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 2, Incarnation: "aaaa"}
	if _, err := s.Register(ctx, me); err != nil {
		t.Fatal(err)
	}
	sub, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	if took, err := take(ctx, s, []queues.Queue{queues.QueueCore}, alice, 1); err != nil || len(took.Jobs) != 1 {
		t.Fatalf("take: %+v %v", took, err)
	}
	// An older process of the ID, stopping late, moves nothing.
	if left, err := s.Leave(ctx, "w1", "zzzz"); err != nil || len(left) != 0 {
		t.Fatalf("leave by a superseded incarnation: %+v %v", left, err)
	}
	if got, _ := s.Get(ctx, sub.Job.ID); got.State != jobs.StateRunning || got.Attempt != 1 {
		t.Fatalf("a superseded incarnation's leave moved the job: %s attempt %d", got.State, got.Attempt)
	}
	if ws, _ := s.Workers(ctx); len(ws) != 1 {
		t.Fatalf("a superseded incarnation's leave deregistered its successor: %+v", ws)
	}
	left, err := s.Leave(ctx, "w1", "aaaa")
	if err != nil || len(left) != 1 || left[0].JobID != sub.Job.ID || left[0].Attempt != 2 || left[0].Queue != string(queues.QueueCore) {
		t.Fatalf("leave: %+v %v", left, err)
	}
	got, _ := s.Get(ctx, sub.Job.ID)
	if got.State != jobs.StateQueued || got.Attempt != 2 || got.Worker != "" {
		t.Fatalf("after leave: %s attempt %d worker %q", got.State, got.Attempt, got.Worker)
	}
	ws, err := s.Workers(ctx)
	if err != nil || len(ws) != 0 {
		t.Fatalf("registry after leave: %+v %v", ws, err)
	}
	bob := queues.Claimant{Worker: "w2", Pool: "fixed"}
	if took, err := take(ctx, s, []queues.Queue{queues.QueueCore}, bob, 1); err != nil || len(took.Jobs) != 1 || took.Jobs[0].Attempt != 2 {
		t.Fatalf("the requeued attempt's task: %+v %v", took, err)
	}
}
