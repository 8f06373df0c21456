package queues_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
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

// TestBatchGroupOfManyKinds: one group of jobs of several queues, teams,
// templates, classes and sizes, some under keys and some not, records
// each job exactly as Submit records the same spec at the same time (the
// group takes the time once and the shared fields from a table), and
// queues the tasks on each queue in the batch's order.
func TestBatchGroupOfManyKinds(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	rdb := s.Redis()
	kinds := []queues.BatchItem{{Spec: spec(""), Queue: queues.QueueCore}}
	burst := spec("")
	burst.Class, burst.Team, burst.Template = jobs.ClassBurst, "vision", "sweep"
	kinds = append(kinds, queues.BatchItem{Spec: burst, Queue: queues.QueueBurst})
	sized := spec("")
	sized.Slots = 3
	kinds = append(kinds, queues.BatchItem{Spec: sized, Queue: queues.QueueCore})
	other := spec("")
	other.Team = "nlp"
	kinds = append(kinds, queues.BatchItem{Spec: other, Queue: queues.QueueCore})
	// The same spec in another queue is another row.
	kinds = append(kinds, queues.BatchItem{Spec: spec(""), Queue: queues.QueueBurst})

	var items []queues.BatchItem
	for i := range 3 * len(kinds) {
		it := kinds[i%len(kinds)]
		if i%2 == 0 {
			it.Spec.IdempotencyKey = fmt.Sprintf("kinds-%d", i)
		}
		items = append(items, it)
	}
	res, err := s.SubmitBatch(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	var want = map[queues.Queue][]string{} // task IDs in the order asynq takes them
	for i, it := range items {
		if res[i].Err != nil || res[i].Duplicate {
			t.Fatalf("job %d: %v (dup %v)", i, res[i].Err, res[i].Duplicate)
		}
		it.Spec.IdempotencyKey = "" // Submit's own would find the batch's job
		one, err := s.Submit(ctx, it.Spec, it.Queue)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := rdb.HGetAll(ctx, s.Namespace().Job(one.Job.ID)).Result()
		b, _ := rdb.HGetAll(ctx, s.Namespace().Job(res[i].Job.ID)).Result()
		if items[i].Spec.IdempotencyKey != "" {
			// The spec's JSON holds its key; all else must be the same.
			var sa, sb jobs.Spec
			if json.Unmarshal([]byte(a["spec"]), &sa) != nil || json.Unmarshal([]byte(b["spec"]), &sb) != nil || sb.IdempotencyKey != items[i].Spec.IdempotencyKey {
				t.Fatalf("job %d: specs %s and %s", i, a["spec"], b["spec"])
			}
			delete(a, "spec")
			delete(b, "spec")
		}
		if len(a) == 0 || !maps.Equal(a, b) {
			t.Errorf("job %d (%s, %s): Submit recorded\n %v\nthe group recorded\n %v", i, it.Queue, it.Spec.Team, a, b)
		}
		if !it.Spec.Sized() {
			want[it.Queue] = append(want[it.Queue], queues.TaskID(res[i].Job.ID, 1))
		}
	}
	for q, ids := range want {
		// asynq takes from the right: the list read right to left is the
		// order of the pushes. Submit's own tasks are in the list too.
		list, err := rdb.LRange(ctx, "asynq:{"+s.Namespace().AsynqQueue(q)+"}:pending", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for k := len(list) - 1; k >= 0; k-- {
			if slices.Contains(ids, list[k]) {
				got = append(got, list[k])
			}
		}
		if !slices.Equal(got, ids) {
			t.Errorf("queue %s: tasks in the order %v, want the batch's %v", q, got, ids)
		}
	}
}

// TestBatchCallsOfTwoTimesAreTwoGroups: a group's script takes the time
// once, so calls prepared at different times go in groups of their own,
// and each job's record and index entry hold its own time.
func TestBatchCallsOfTwoTimesAreTwoGroups(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	at := time.Now().Truncate(time.Millisecond)
	items := make([]queues.BatchItem, 6)
	times := make([]time.Time, len(items))
	for i := range items {
		items[i] = queues.BatchItem{Spec: spec(""), Queue: queues.QueueCore}
		times[i] = at.Add(time.Duration(i/2) * time.Second) // three times, two calls each
	}
	res, err := s.SubmitEachAt(ctx, items, times)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		created, err := s.Redis().HGet(ctx, s.Namespace().Job(r.Job.ID), "created").Int64()
		if err != nil || created != times[i].UnixMilli() {
			t.Errorf("job %d: created %d (%v), want its own time %d", i, created, err, times[i].UnixMilli())
		}
		score, err := s.Redis().ZScore(ctx, s.Namespace().JobIndex(), r.Job.ID).Result()
		if err != nil || int64(score) != times[i].UnixMilli() {
			t.Errorf("job %d: index score %v (%v), want %d", i, score, err, times[i].UnixMilli())
		}
	}
}

// TestBatchGroupCallAllocatesPerGroupNotPerJob: laying out a group's
// command makes a few allocations for the group and none per job (each
// string or slice boxed for go-redis was one, eleven per job in all).
func TestBatchGroupCallAllocatesPerGroupNotPerJob(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	small, err := queues.GroupCallAllocs(ctx, s, spec(""), queues.QueueCore, 10)
	if err != nil {
		t.Fatal(err)
	}
	large, err := queues.GroupCallAllocs(ctx, s, spec(""), queues.QueueCore, 100)
	if err != nil {
		t.Fatal(err)
	}
	// The key count of the larger group is boxed as an int over 255, the
	// one allocation it may add.
	if large-small > 1 {
		t.Errorf("groupCall makes %.0f allocations for 10 jobs and %.0f for 100: some are per job", small, large)
	}
}
