package checkpoints_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
)

// TestCommitIsFenced: a commit lands only for the current attempt on its
// worker with a growing sequence; the ledger keeps the newest keys.
func TestCommitIsFenced(t *testing.T) {
	t.Parallel()
	k, s := newStore(t)
	ctx := context.Background()
	id := submit(t, k)
	j, ok, err := k.Claim(ctx, queues.Delivery{JobID: id, Attempt: 1}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	l1 := s.Ledger("w1")
	for seq := int64(1); seq <= 5; seq++ {
		if err := l1.Commit(ctx, id, 1, seq, fmt.Sprintf("m%d", seq), fmt.Sprintf("step=%d", seq), 3); err != nil {
			t.Fatalf("commit %d: %v", seq, err)
		}
	}
	if got, err := l1.Committed(ctx, id); err != nil || !slices.Equal(got, []string{"m5", "m4", "m3"}) {
		t.Fatalf("committed = %v %v, want [m5 m4 m3]", got, err)
	}
	for _, seq := range []int64{5, 4} {
		if err := l1.Commit(ctx, id, 1, seq, "late", "late", 3); !errors.Is(err, checkpoints.ErrFenced) {
			t.Fatalf("sequence %d after 5: %v, want refused", seq, err)
		}
	}
	if err := s.Ledger("w2").Commit(ctx, id, 1, 9, "other", "other", 3); !errors.Is(err, checkpoints.ErrFenced) {
		t.Fatalf("commit by another worker: %v, want refused", err)
	}
	if got, _ := k.Get(ctx, id); got.Checkpoint != "step=5" {
		t.Fatalf("record's checkpoint = %q, want step=5", got.Checkpoint)
	}

	// The attempt moves on: its worker's late commit is refused and
	// changes neither the token nor the list.
	if _, err := k.Requeue(ctx, j, "w1", queues.Requeue{Queue: queues.QueueBurst, Reason: "reclaimed", NotBefore: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := l1.Commit(ctx, id, 1, 6, "stale", "stale", 3); !errors.Is(err, checkpoints.ErrFenced) {
		t.Fatalf("commit by the moved-on attempt: %v, want refused", err)
	}
	if _, ok, err := k.Claim(ctx, queues.Delivery{JobID: id, Attempt: 2}, "w2"); err != nil || !ok {
		t.Fatalf("claim attempt 2: %v %v", ok, err)
	}
	if err := l1.Commit(ctx, id, 1, 7, "stale", "stale", 3); !errors.Is(err, checkpoints.ErrFenced) {
		t.Fatalf("commit by attempt 1 while 2 runs: %v, want refused", err)
	}
	// The new attempt's sequence starts again.
	if err := s.Ledger("w2").Commit(ctx, id, 2, 1, "a2m1", "step=6", 3); err != nil {
		t.Fatalf("attempt 2's first commit: %v", err)
	}
	// A reader of the ledger lists the same, whoever committed.
	if got, _ := s.Committed(ctx, id); !slices.Equal(got, []string{"a2m1", "m5", "m4"}) {
		t.Fatalf("committed = %v, want [a2m1 m5 m4]", got)
	}
	if got, _ := k.Get(ctx, id); got.Checkpoint != "step=6" {
		t.Fatalf("record's checkpoint = %q, want step=6", got.Checkpoint)
	}
	if err := l1.Commit(ctx, "nope", 1, 1, "m", "t", 3); err == nil {
		t.Fatal("commit for an unknown job accepted")
	}
	if err := l1.Commit(ctx, id, 2, 2, "m", "t", 0); err == nil {
		t.Fatal("commit keeping no checkpoint accepted")
	}
}
