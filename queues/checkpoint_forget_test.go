package queues_test

import (
	"context"
	"testing"

	"github.com/ballastdev/ballast/queues"
)

// TestForgetCheckpoints: a live job keeps its list of checkpoints; an
// ended one, or one whose record is gone, loses it.
func TestForgetCheckpoints(t *testing.T) {
	s, _ := newStore(t)
	rdb := s.Redis()
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	j := sub.Job
	list := s.Namespace().JobCheckpoints(j.ID)
	if err := rdb.LPush(ctx, list, "jobs/x/manifests/a.json").Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ForgetCheckpoints(ctx, j.ID); err != nil || ok {
		t.Fatalf("queued job: ForgetCheckpoints = %v, %v; want false", ok, err)
	}
	if n, _ := rdb.Exists(ctx, list).Result(); n != 1 {
		t.Fatal("a queued job's list was dropped")
	}
	if _, err := s.Cancel(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ForgetCheckpoints(ctx, j.ID); err != nil || !ok {
		t.Fatalf("cancelled job: ForgetCheckpoints = %v, %v; want true", ok, err)
	}
	if n, _ := rdb.Exists(ctx, list).Result(); n != 0 {
		t.Fatal("an ended job's list stayed")
	}
}
