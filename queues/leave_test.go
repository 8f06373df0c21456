package queues_test

import (
	"context"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
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
	if ws, _ := registry.New(s).Workers(ctx); len(ws) != 1 {
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
	ws, err := registry.New(s).Workers(ctx)
	if err != nil || len(ws) != 0 {
		t.Fatalf("registry after leave: %+v %v", ws, err)
	}
	bob := queues.Claimant{Worker: "w2", Pool: "fixed"}
	if took, err := take(ctx, s, []queues.Queue{queues.QueueCore}, bob, 1); err != nil || len(took.Jobs) != 1 || took.Jobs[0].Attempt != 2 {
		t.Fatalf("the requeued attempt's task: %+v %v", took, err)
	}
}

// TestLeaveRequeuesAGangOnlyMember0CanNoLongerMove: a worker that leaves
// holding a member of a running gang leaves it to member 0 only when a
// preemption is pending (the drain's hand-over), member 0 is not its own
// and has not ended. Without the request (Redis lost it, or the worker's own requeue),
// or holding member 0, it requeues the gang whole: a member that will
// never run again leaves the gang nothing to end it.
func TestLeaveRequeuesAGangOnlyMember0CanNoLongerMove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		leaves  string
		preempt bool
		// done0: member 0 exited 0 before the hand-over, and runs nowhere
		// to act on it.
		done0 bool
		moved bool
	}{
		{"member 1's worker, the hand-over pending", "w1", true, false, false},
		{"member 1's worker, no move pending", "w1", false, false, true},
		{"member 0's worker, a preemption pending", "w0", true, false, true},
		{"member 1's worker, handed over to member 0 that ended", "w1", true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, _, j, _, _ := gangOnRecord(t)
			if c.done0 {
				code := 0
				end, err := s.FinishMember(ctx, j, "w0", 0, jobs.StateSucceeded, &code, "")
				if err != nil || end != queues.MemberDone {
					t.Fatalf("member 0's end = %v, %v", end, err)
				}
			}
			if c.preempt {
				if ok, err := s.RequestPreempt(ctx, j.ID, j.Attempt, queues.QueueCore, "member 1's worker w1 draining"); !ok || err != nil {
					t.Fatalf("RequestPreempt = %v, %v", ok, err)
				}
			}
			inc := map[string]string{"w0": "i0", "w1": "i1"}[c.leaves]
			rs, err := s.Leave(ctx, c.leaves, inc)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := s.Get(ctx, j.ID)
			if !c.moved {
				if len(rs) != 0 || got.State != jobs.StateRunning || got.Attempt != j.Attempt {
					t.Fatalf("Leave requeued %+v; the gang is %s at attempt %d, want left running to member 0", rs, got.State, got.Attempt)
				}
				return
			}
			if len(rs) != 1 || rs[0].Attempt != j.Attempt+1 || got.State != jobs.StateQueued || got.Attempt != j.Attempt+1 {
				t.Fatalf("Leave requeued %+v; the gang is %s at attempt %d, want it requeued whole at %d", rs, got.State, got.Attempt, j.Attempt+1)
			}
			for _, w := range []string{"w0", "w1"} {
				if n, _ := s.Redis().SCard(ctx, s.Namespace().WorkerJobs(w)).Result(); n != 0 {
					t.Errorf("%s still lists the requeued gang", w)
				}
			}
		})
	}
}
