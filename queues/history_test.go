package queues_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestHistoryReadsEveryJobInTheWindowOnce: 2,500 jobs, many created in the
// same millisecond across page boundaries, are each read exactly once, in
// creation order, and only inside the window.
func TestHistoryReadsEveryJobInTheWindowOnce(t *testing.T) {
	t.Parallel()
	s, clk := newStore(t)
	ctx := context.Background()
	start := clk.Now()
	want := map[string]bool{}
	for i := 0; i < 2500; i++ {
		if i%700 == 0 {
			clk.Add(time.Millisecond) // long runs of jobs share a millisecond
		}
		r, err := s.Submit(ctx, spec(""), queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		want[r.Job.ID] = true
	}
	clk.Add(time.Second)
	late, _ := s.Submit(ctx, spec(""), queues.QueueCore) // outside the window
	seen := map[string]bool{}
	var prev time.Time
	err := s.History(ctx, start, clk.Now().Add(-time.Millisecond), func(j jobs.Job) error {
		if seen[j.ID] {
			t.Fatalf("job %s read twice", j.ID)
		}
		if j.CreatedAt.Before(prev) {
			t.Fatalf("out of order: %s before %s", j.CreatedAt, prev)
		}
		seen[j.ID], prev = true, j.CreatedAt
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(want) || seen[late.Job.ID] {
		t.Fatalf("read %d jobs, want %d (the late one read: %v)", len(seen), len(want), seen[late.Job.ID])
	}
}
