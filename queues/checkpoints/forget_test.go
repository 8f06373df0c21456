package checkpoints_test

import (
	"context"
	"testing"
)

// TestForget: a live job keeps its list of checkpoints; an ended one, or
// one whose record is gone, loses it.
func TestForget(t *testing.T) {
	t.Parallel()
	k, s := newStore(t)
	rdb := k.Redis()
	ctx := context.Background()
	id := submit(t, k)
	list := k.Namespace().Job(id) + ":checkpoints"
	if err := rdb.LPush(ctx, list, "jobs/x/manifests/a.json").Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Forget(ctx, id); err != nil || ok {
		t.Fatalf("queued job: Forget = %v, %v; want false", ok, err)
	}
	if got, _ := s.Committed(ctx, id); len(got) != 1 {
		t.Fatalf("a queued job's list was dropped: %v", got)
	}
	if _, err := k.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Forget(ctx, id); err != nil || !ok {
		t.Fatalf("cancelled job: Forget = %v, %v; want true", ok, err)
	}
	if n, _ := rdb.Exists(ctx, list).Result(); n != 0 {
		t.Fatal("an ended job's list stayed")
	}
	if ok, err := s.Forget(ctx, "gone"); err != nil || !ok {
		t.Fatalf("job whose record is gone: Forget = %v, %v; want true", ok, err)
	}
}
