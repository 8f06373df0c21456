package queues_test

import (
	"context"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestHeldQueue: a core job held for admission under team shares is
// counted in held's depth, moves to core when admitted, and a held job
// is cancelled at once like any queued one.
func TestHeldQueue(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	if !queues.QueueHeld.Valid() || queues.QueueHeld.Elastic() {
		t.Fatalf("held: valid %v, elastic %v; want a valid, non-elastic queue", queues.QueueHeld.Valid(), queues.QueueHeld.Elastic())
	}
	a, err := s.Submit(ctx, spec("a"), queues.QueueHeld)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Submit(ctx, spec("b"), queues.QueueHeld)
	if err != nil {
		t.Fatal(err)
	}
	if n := pending(t, s, queues.QueueHeld); n != 2 {
		t.Fatalf("held depth %d, want 2", n)
	}
	if n, err := s.Move(ctx, a.Job.ID, 1, queues.QueueCore, "admitted"); n != 2 || err != nil {
		t.Fatalf("admission: attempt %d, %v", n, err)
	}
	if res, err := s.Cancel(ctx, b.Job.ID); res != queues.Cancelled || err != nil {
		t.Fatalf("cancel of a held job: %s %v", res, err)
	}
	if j, _ := s.Get(ctx, b.Job.ID); j.State != jobs.StateCancelled {
		t.Errorf("cancelled held job is %s", j.State)
	}
	if held, core := pending(t, s, queues.QueueHeld), pending(t, s, queues.QueueCore); held != 0 || core != 1 {
		t.Errorf("after admission and cancel: held %d, core %d; want 0 and 1", held, core)
	}
}
