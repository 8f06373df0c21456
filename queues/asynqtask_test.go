package queues_test

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestSubmittedTaskIsAsynqs guards the task the submit script writes in
// asynq's layout: asynq's Inspector must read it exactly as it reads the
// task asynq.Client writes for the same job (the separate enqueue), and
// asynq's server must deliver it. An asynq upgrade that changes its layout
// fails here.
func TestSubmittedTaskIsAsynqs(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	inline := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	separate := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, SeparateEnqueue: true})
	ctx := context.Background()
	sp := jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassBurst,
		Timeout: jobs.Duration(90*time.Minute + 500*time.Millisecond), Grace: jobs.Duration(20 * time.Second)}
	a, err := inline.Submit(ctx, sp, queues.QueueBurst)
	if err != nil {
		t.Fatal(err)
	}
	b, err := separate.Submit(ctx, sp, queues.QueueBurst)
	if err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	qname := inline.Namespace().AsynqQueue(queues.QueueBurst)
	info := func(id string) *asynq.TaskInfo {
		t.Helper()
		ti, err := insp.GetTaskInfo(qname, queues.TaskID(id, 1))
		if err != nil {
			t.Fatalf("asynq's Inspector cannot read the task of %s: %v", id, err)
		}
		return ti
	}
	got, want := info(a.Job.ID), info(b.Job.ID)
	d, err := queues.DecodeDelivery(got.Payload)
	if err != nil || d != (queues.Delivery{JobID: a.Job.ID, Attempt: 1}) {
		t.Fatalf("payload %q decodes to %+v (%v)", got.Payload, d, err)
	}
	if got.ID != queues.TaskID(a.Job.ID, 1) || got.State != asynq.TaskStatePending || got.Queue != qname {
		t.Fatalf("inline task %+v", got)
	}
	// Everything but what names the job must match asynq.Client's task.
	got.ID, got.Payload, got.NextProcessAt = want.ID, want.Payload, want.NextProcessAt
	if got.Type != want.Type || got.MaxRetry != want.MaxRetry || got.Timeout != want.Timeout || got.Deadline != want.Deadline ||
		got.Retention != want.Retention || got.Group != want.Group || got.State != want.State || got.Queue != want.Queue ||
		len(got.Headers) != len(want.Headers) {
		t.Fatalf("the script's task reads as\n  %+v\nasynq.Client's as\n  %+v", got, want)
	}
	if q, err := insp.GetQueueInfo(qname); err != nil || q.Pending != 2 {
		t.Fatalf("asynq sees %+v (%v) in %s, want 2 pending", q, err, qname)
	}
	// The outbox is for the separate enqueue only: the inline task exists
	// with its record.
	if n, err := rdb.ZCard(ctx, inline.Namespace().Outbox()).Result(); err != nil || n != 1 {
		t.Fatalf("outbox holds %d (%v), want only the separately enqueued job", n, err)
	}

	// asynq's own server delivers both.
	seen := make(chan string, 2)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{Concurrency: 2, Queues: map[string]int{qname: 1},
		TaskCheckInterval: 20 * time.Millisecond, LogLevel: asynq.FatalLevel})
	if err := srv.Start(asynq.HandlerFunc(func(_ context.Context, task *asynq.Task) error {
		d, err := queues.DecodeDelivery(task.Payload())
		if err == nil {
			seen <- d.JobID
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ran := map[string]bool{}
	for len(ran) < 2 {
		select {
		case id := <-seen:
			ran[id] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("asynq's server delivered %v, want both jobs", ran)
		}
	}
	if !ran[a.Job.ID] || !ran[b.Job.ID] {
		t.Fatalf("delivered %v", ran)
	}
}
