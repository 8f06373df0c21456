package queues_test

import (
	"context"
	"testing"

	"github.com/ballastdev/ballast/queues"
)

// TestRunsCountStartsNotDeliveries: the record's runs counter is what a
// user counts. A move of a waiting job is a delivery and no run; the
// claim that starts an attempt is one run, and its replay after a lost
// reply (same incarnation) is not a second one; a requeued attempt that
// starts again is.
func TestRunsCountStartsNotDeliveries(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec(""), queues.QueueBurst)
	if err != nil {
		t.Fatal(err)
	}
	if sub.Job.Runs != 0 {
		t.Fatalf("a submitted job has %d runs, want 0", sub.Job.Runs)
	}
	// Lent before it ran: a second delivery, still no run.
	n, err := s.Move(ctx, sub.Job.ID, 1, queues.QueueLoan, "lent")
	if err != nil || n != 2 {
		t.Fatalf("Move = %d, %v; want attempt 2", n, err)
	}
	j, err := s.Get(ctx, sub.Job.ID)
	if err != nil || j.Attempt != 2 || j.Runs != 0 {
		t.Fatalf("after the move: attempt %d runs %d (%v); want attempt 2, runs 0", j.Attempt, j.Runs, err)
	}
	d := queues.Delivery{JobID: j.ID, Attempt: 2}
	j, ok, err := s.ClaimAs(ctx, d, "w1", "inc1")
	if err != nil || !ok || j.Runs != 1 {
		t.Fatalf("claim: ok=%v err=%v runs %d; want claimed with runs 1", ok, err, j.Runs)
	}
	// The same incarnation's retry of a claim whose reply was lost.
	if j, ok, err := s.ClaimAs(ctx, d, "w1", "inc1"); err != nil || !ok || j.Runs != 1 {
		t.Fatalf("replayed claim: ok=%v err=%v runs %d; want the record again with runs 1", ok, err, j.Runs)
	}
	// A stale second delivery starts nothing.
	if _, ok, _ := s.Claim(ctx, d, "w2"); ok {
		t.Fatal("a second worker claimed a running attempt")
	}
	moved, err := s.Requeue(ctx, j, "w1", queues.Requeue{Reason: "draining"})
	if err != nil || moved.Attempt != 3 {
		t.Fatalf("Requeue = %+v, %v; want attempt 3", moved, err)
	}
	j, err = s.Get(ctx, j.ID)
	if err != nil || j.Runs != 1 {
		t.Fatalf("requeued: runs %d (%v); want still 1", j.Runs, err)
	}
	j, ok, err = s.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: 3}, "w2")
	if err != nil || !ok || j.Runs != 2 || j.Attempt != 3 {
		t.Fatalf("second start: ok=%v err=%v attempt %d runs %d; want attempt 3, runs 2", ok, err, j.Attempt, j.Runs)
	}
	// Lists read the counter too.
	list, err := s.List(ctx, queues.ListOptions{Limit: 10})
	if err != nil || len(list) != 1 || list[0].Runs != 2 {
		t.Fatalf("List = %+v, %v; want the job with runs 2", list, err)
	}
}
