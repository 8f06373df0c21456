package queues_test

import (
	"context"
	"maps"
	"testing"

	"github.com/ballastdev/ballast/queues"
)

// TestJobsByKey: a key maps to the job its submission created, however
// often the submission was retried; an unused key is absent.
func TestJobsByKey(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec("sweep:x:0"), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.Submit(ctx, spec("sweep:x:0"), queues.QueueCore); err != nil || again.Job.ID != sub.Job.ID {
		t.Fatalf("retried submission: %+v, %v", again, err)
	}
	got, err := s.JobsByKey(ctx, []string{"sweep:x:0", "sweep:x:1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"sweep:x:0": sub.Job.ID}; !maps.Equal(got, want) {
		t.Fatalf("JobsByKey = %v, want %v", got, want)
	}
	if got, err := s.JobsByKey(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("JobsByKey(nil) = %v, %v", got, err)
	}
}
