package queues_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestBatchRecordsAJobAsSubmitDoes: a job recorded by a batch's group
// script holds the same fields as one recorded by Submit, with its task,
// and a sized job (no inline task) its outbox entry, as Submit's.
func TestBatchRecordsAJobAsSubmitDoes(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	rdb := s.Redis()
	sized := spec("")
	sized.Slots = 2
	for _, c := range []struct {
		name string
		spec jobs.Spec
	}{{"one slot", spec("")}, {"sized", sized}} {
		one, err := s.Submit(ctx, c.spec, queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.SubmitBatch(ctx, []queues.BatchItem{{Spec: c.spec, Queue: queues.QueueCore}})
		if err != nil || res[0].Err != nil {
			t.Fatalf("%s: batch: %v %v", c.name, err, res[0].Err)
		}
		batched := res[0].Job
		a, err := rdb.HGetAll(ctx, s.Namespace().Job(one.Job.ID)).Result()
		if err != nil {
			t.Fatal(err)
		}
		b, err := rdb.HGetAll(ctx, s.Namespace().Job(batched.ID)).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"created", "queued", "not_before"} { // times of their own calls
			delete(a, f)
			delete(b, f)
		}
		if !maps.Equal(a, b) {
			t.Errorf("%s: Submit recorded\n %v\na batch recorded\n %v", c.name, a, b)
		}
		for _, id := range []string{one.Job.ID, batched.ID} {
			inIndex, _ := rdb.ZScore(ctx, s.Namespace().JobIndex(), id).Result()
			inActive, _ := rdb.ZScore(ctx, s.Namespace().ActiveJobs(), id).Result()
			inOutbox, _ := rdb.ZScore(ctx, s.Namespace().Outbox(), id).Result()
			if inIndex == 0 || inActive == 0 {
				t.Errorf("%s: job %s missing from the index (%v) or the active set (%v)", c.name, id, inIndex, inActive)
			}
			if wantOutbox := c.spec.Sized(); (inOutbox != 0) != wantOutbox {
				t.Errorf("%s: job %s in the outbox: %v, want %v", c.name, id, inOutbox != 0, wantOutbox)
			}
		}
	}
	if n := pending(t, s, queues.QueueCore); n != 2 {
		t.Errorf("%d tasks pending in core, want the two one-slot jobs'", n)
	}
}

// TestBatchResentRecordsNothingTwice: the same group sent again, as after
// a lost reply, answers every job as new with its own ID and writes no
// second record or task.
func TestBatchResentRecordsNothingTwice(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	items := make([]queues.BatchItem, 250) // three groups
	for i := range items {
		key := ""
		if i%2 == 0 {
			key = fmt.Sprintf("resent-%d", i)
		}
		items[i] = queues.BatchItem{Spec: spec(key), Queue: queues.QueueCore}
	}
	first, second, err := s.SubmitGroupTwice(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	for i := range items {
		if first[i].Duplicate || second[i].Duplicate || first[i].Job.ID != second[i].Job.ID {
			t.Fatalf("job %d: first %s (dup %v), resent %s (dup %v); want the same new job", i,
				first[i].Job.ID, first[i].Duplicate, second[i].Job.ID, second[i].Duplicate)
		}
	}
	if n := pending(t, s, queues.QueueCore); n != len(items) {
		t.Fatalf("%d tasks pending for %d jobs", n, len(items))
	}
	if n, err := s.Redis().ZCard(ctx, s.Namespace().JobIndex()).Result(); err != nil || n != int64(len(items)) {
		t.Fatalf("%d jobs in the index (%v), want %d", n, err, len(items))
	}
}

// TestBatchKeyTwiceInOneGroup: two jobs of one batch under one key are one
// job when they are the same request, and a conflict when they are not,
// as two submissions in a row would be.
func TestBatchKeyTwiceInOneGroup(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	other := spec("same")
	other.Command = []string{"false"}
	res, err := s.SubmitBatch(ctx, []queues.BatchItem{
		{Spec: spec("same"), Queue: queues.QueueCore},
		{Spec: spec("same"), Queue: queues.QueueCore},
		{Spec: other, Queue: queues.QueueCore},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[0].Duplicate {
		t.Fatalf("first: %+v, %v; want a new job", res[0].Submitted, res[0].Err)
	}
	if res[1].Err != nil || !res[1].Duplicate || res[1].Job.ID != res[0].Job.ID {
		t.Fatalf("second: %s dup %v, %v; want a duplicate of %s", res[1].Job.ID, res[1].Duplicate, res[1].Err, res[0].Job.ID)
	}
	if !errors.Is(res[2].Err, jobs.ErrIdempotencyConflict) {
		t.Fatalf("third (another request under the key): %v; want a conflict", res[2].Err)
	}
	if n := pending(t, s, queues.QueueCore); n != 1 {
		t.Fatalf("%d tasks pending, want 1", n)
	}
}
