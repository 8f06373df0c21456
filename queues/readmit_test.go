package queues_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// backlog is how many jobs wait behind a readmitted one in these tests:
// about what the chaos run that found the problem had queued.
const backlog = 800

// fill submits n jobs to q and returns their IDs in submission order.
func fill(t *testing.T, s *queues.Store, q queues.Queue, n int) []string {
	t.Helper()
	items := make([]queues.BatchItem, n)
	for i := range items {
		items[i] = queues.BatchItem{Spec: spec(""), Queue: q}
	}
	res, err := s.SubmitBatch(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		ids[i] = r.Job.ID
	}
	return ids
}

// fillApart submits n jobs to q a millisecond apart, so that their
// admission order is not left to their IDs.
func fillApart(t *testing.T, s *queues.Store, c *clock, q queues.Queue, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		c.Add(time.Millisecond)
		ids = append(ids, fill(t, s, q, 1)...)
	}
	return ids
}

// takeIDs takes up to n from qs for c and returns the IDs in take order.
func takeIDs(t *testing.T, s *queues.Store, qs []queues.Queue, c queues.Claimant, n int) []string {
	t.Helper()
	took, err := take(context.Background(), s, qs, c, n)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(took.Jobs))
	for i, j := range took.Jobs {
		ids[i] = j.ID
	}
	return ids
}

func jobIDs(js []jobs.Job) []string {
	ids := make([]string, len(js))
	for i, j := range js {
		ids[i] = j.ID
	}
	return ids
}

// readmitCase sends the jobs running on worker w back to their queue, for
// one reason, and returns the queue they wait in now.
type readmitCase struct {
	name string
	// to is where the jobs are taken from; back is where they wait after.
	to, back queues.Queue
	send     func(t *testing.T, s *queues.Store, c *clock, w queues.WorkerInfo, running []jobs.Job)
}

func readmitCases() []readmitCase {
	ctx := context.Background()
	requeue := func(r queues.Requeue) func(*testing.T, *queues.Store, *clock, queues.WorkerInfo, []jobs.Job) {
		return func(t *testing.T, s *queues.Store, _ *clock, w queues.WorkerInfo, running []jobs.Job) {
			for _, j := range running {
				if r.Preempt {
					if ok, err := s.RequestPreempt(ctx, j.ID, j.Attempt, queues.QueueBurst, "core work waits"); !ok || err != nil {
						t.Fatalf("preempt request: %v %v", ok, err)
					}
				}
				if got, err := s.Requeue(ctx, j, w.ID, r); err != nil || got.Attempt != j.Attempt+1 {
					t.Fatalf("requeue of %s: %+v %v", j.ID, got, err)
				}
			}
		}
	}
	return []readmitCase{
		{name: "worker lost", to: queues.QueueCore, back: queues.QueueCore,
			send: func(t *testing.T, s *queues.Store, c *clock, w queues.WorkerInfo, running []jobs.Job) {
				c.Add(10 * time.Second)
				rs, err := s.RecoverDeadWorkers(ctx, 4*time.Second)
				if err != nil || len(rs) != len(running) {
					t.Fatalf("recovery: %+v %v", rs, err)
				}
			}},
		{name: "worker restarted under its ID", to: queues.QueueCore, back: queues.QueueCore,
			send: func(t *testing.T, s *queues.Store, _ *clock, w queues.WorkerInfo, running []jobs.Job) {
				w.Incarnation = "bbbb"
				b, err := s.Register(ctx, w)
				if err != nil || len(b.TakenOver) != len(running) {
					t.Fatalf("take-over: %+v %v", b, err)
				}
			}},
		{name: "worker left", to: queues.QueueCore, back: queues.QueueCore,
			send: func(t *testing.T, s *queues.Store, _ *clock, w queues.WorkerInfo, running []jobs.Job) {
				rs, err := s.Leave(ctx, w.ID, w.Incarnation)
				if err != nil || len(rs) != len(running) {
					t.Fatalf("leave: %+v %v", rs, err)
				}
			}},
		{name: "unrecorded on its worker", to: queues.QueueCore, back: queues.QueueCore,
			send: func(t *testing.T, s *queues.Store, c *clock, w queues.WorkerInfo, running []jobs.Job) {
				c.Add(time.Minute) // past the grace a claim has to show in a beat
				var ds []queues.Delivery
				for _, j := range running {
					ds = append(ds, queues.Delivery{JobID: j.ID, Attempt: j.Attempt})
				}
				rs, err := s.RequeueUnrecorded(ctx, w, ds)
				if err != nil || len(rs) != len(running) {
					t.Fatalf("requeue unrecorded: %+v %v", rs, err)
				}
			}},
		{name: "worker drained", to: queues.QueueCore, back: queues.QueueCore,
			send: requeue(queues.Requeue{Reason: "worker draining"})},
		{name: "loan reclaimed", to: queues.QueueLoan, back: queues.QueueBurst,
			send: requeue(queues.Requeue{Preempt: true})},
		{name: "spot notice", to: queues.QueueBurst, back: queues.QueueBurst,
			send: requeue(queues.Requeue{Preempt: true, Spot: true})},
	}
}

// TestReadmittedJobsAreTakenFirst: with a backlog queued after them, the
// jobs a worker ran are, once sent back for any of the reasons that are
// no failure of theirs, the next ones taken from their queue, in the order
// they were first admitted, whatever the order they came back in; then
// the backlog follows in its own order.
func TestReadmittedJobsAreTakenFirst(t *testing.T) {
	t.Parallel()
	for _, tc := range readmitCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, c := newStore(t)
			ctx := context.Background()
			w := queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 3, Incarnation: "aaaa"}
			if _, err := s.Register(ctx, w); err != nil {
				t.Fatal(err)
			}
			var early []string
			if tc.back != tc.to {
				// The queue they come back to holds work admitted before
				// theirs too: it waits behind them all the same.
				early = fill(t, s, tc.back, 1)
			}
			first := fillApart(t, s, c, tc.to, 3)
			// The backlog is admitted after them: its head a millisecond
			// apart, since jobs admitted at one instant are served in ID
			// order, which is not the order they were submitted in.
			later := append(early, fillApart(t, s, c, tc.back, 2)...)
			c.Add(time.Millisecond)
			later = append(later, fill(t, s, tc.back, backlog-2)...)
			me := queues.Claimant{Worker: w.ID, Incarnation: w.Incarnation, Pool: w.Pool}
			took, err := take(ctx, s, []queues.Queue{tc.to}, me, 3)
			if err != nil || !slices.Equal(jobIDs(took.Jobs), first) {
				t.Fatalf("first take: %v %v; want %v", jobIDs(took.Jobs), err, first)
			}
			// Back in another order than they were admitted.
			running := []jobs.Job{took.Jobs[2], took.Jobs[0], took.Jobs[1]}
			tc.send(t, s, c, w, running)
			other := queues.Claimant{Worker: "w2", Incarnation: "cccc", Pool: "fixed"}
			if got := takeIDs(t, s, []queues.Queue{tc.back}, other, 5); !slices.Equal(got, append(slices.Clone(first), later[:2]...)) {
				t.Fatalf("after %s the next takes are %v; want %v then the backlog %v", tc.name, got, first, later[:2])
			}
			for _, id := range first {
				j, err := s.Get(ctx, id)
				if err != nil || !j.Readmitted || j.Attempt != 2 {
					t.Fatalf("record of %s: %+v %v; want readmitted at attempt 2", id, j, err)
				}
			}
		})
	}
}

// TestRetryQueuesAsNewWork is the other side: a retry after a failure is
// not readmitted, and waits behind the backlog. It also shows that the
// order above is the readmission's doing, not the queue's.
func TestRetryQueuesAsNewWork(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	first := fill(t, s, queues.QueueCore, 1)
	c.Add(time.Millisecond)
	later := fill(t, s, queues.QueueCore, 3)
	took, err := take(ctx, s, []queues.Queue{queues.QueueCore}, alice, 1)
	if err != nil || len(took.Jobs) != 1 || took.Jobs[0].ID != first[0] {
		t.Fatalf("first take: %+v %v", took, err)
	}
	if _, err := s.Requeue(ctx, took.Jobs[0], alice.Worker, queues.Requeue{Retry: true, Reason: "exit 1"}); err != nil {
		t.Fatal(err)
	}
	if got := takeIDs(t, s, []queues.Queue{queues.QueueCore}, alice, 4); !slices.Equal(got, append(slices.Clone(later), first[0])) {
		t.Fatalf("takes after a retry: %v; want the backlog %v, then the retry %s", got, later, first[0])
	}
}

// TestReadmittedStaysAheadWhenMoved: a readmitted job that the controller
// moves while it waits (lent, unlent) keeps its place ahead of the jobs
// never taken in the queue it goes to; one never taken moved the same way
// queues behind them.
func TestReadmittedStaysAheadWhenMoved(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	fresh := fillApart(t, s, c, queues.QueueBurst, 1)
	first := fillApart(t, s, c, queues.QueueLoan, 1)
	c.Add(time.Millisecond)
	later := fill(t, s, queues.QueueLoan, 5)
	took, err := take(ctx, s, []queues.Queue{queues.QueueLoan}, alice, 1)
	if err != nil || len(took.Jobs) != 1 {
		t.Fatalf("take: %+v %v", took, err)
	}
	j := took.Jobs[0]
	if _, err := s.RequestPreempt(ctx, j.ID, j.Attempt, queues.QueueBurst, "core waits"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Requeue(ctx, j, alice.Worker, queues.Requeue{Preempt: true}); err != nil {
		t.Fatal(err)
	}
	// Lent again, with the never-taken burst job.
	for _, id := range []string{fresh[0], first[0]} {
		cur, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s.Move(ctx, id, cur.Attempt, queues.QueueLoan, "lent"); err != nil || n == 0 {
			t.Fatalf("lend of %s: %d %v", id, n, err)
		}
	}
	want := append(append([]string{first[0]}, later...), fresh[0])
	if got := takeIDs(t, s, []queues.Queue{queues.QueueLoan}, alice, 7); !slices.Equal(got, want) {
		t.Fatalf("loan takes: %v; want %v", got, want)
	}
}

// TestHeldDeliveryIsReadmitted: an attempt a worker took from asynq and
// never claimed (the worker died in between) is moved on by Readmit ahead
// of the jobs submitted after it.
func TestHeldDeliveryIsReadmitted(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	c := testenv.NewClock(time.Now())
	s := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, Now: c.Now})
	ctx := context.Background()
	first := fill(t, s, queues.QueueCore, 1)
	testenv.HoldTask(t, rdb, s.Namespace().AsynqQueue(queues.QueueCore))
	c.Add(time.Millisecond)
	later := fill(t, s, queues.QueueCore, backlog)
	held, err := s.HeldDeliveries(ctx)
	if err != nil || len(held) != 1 || held[0].JobID != first[0] {
		t.Fatalf("held: %+v %v; want %s", held, err, first[0])
	}
	if n, err := s.Readmit(ctx, held[0].JobID, held[0].Attempt, held[0].Queue, "held"); err != nil || n != 2 {
		t.Fatalf("readmit: %d %v", n, err)
	}
	if got := takeIDs(t, s, []queues.Queue{queues.QueueCore}, alice, 3); !slices.Equal(got, []string{first[0], later[0], later[1]}) {
		t.Fatalf("takes after the held delivery moved on: %v; want %s first", got, first[0])
	}
}

// TestReadmittedTaskIsAsynqs: on a store that enqueues through asynq (the
// Redis Cluster way, where workers consume with asynq's own server), a
// readmitted attempt's task, which the store writes itself, reads in
// asynq's Inspector as asynq.Client's do, and asynq's server delivers it
// before the backlog queued after its first admission.
func TestReadmittedTaskIsAsynqs(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	s := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, SeparateEnqueue: true})
	ctx := context.Background()
	a, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	j, ok, err := s.Claim(ctx, queues.Delivery{JobID: a.Job.ID, Attempt: 1}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	qname := s.Namespace().AsynqQueue(queues.QueueCore)
	// The first delivery was consumed (as asynq's server would have).
	if err := insp.DeleteTask(qname, queues.TaskID(a.Job.ID, 1)); err != nil {
		t.Fatal(err)
	}
	later := fill(t, s, queues.QueueCore, 50)
	if _, err := s.Requeue(ctx, j, "w1", queues.Requeue{Reason: "worker w1 draining"}); err != nil {
		t.Fatal(err)
	}
	got, err := insp.GetTaskInfo(qname, queues.TaskID(a.Job.ID, 2))
	if err != nil {
		t.Fatalf("asynq's Inspector cannot read the readmitted task: %v", err)
	}
	want, err := insp.GetTaskInfo(qname, queues.TaskID(later[0], 1))
	if err != nil {
		t.Fatal(err)
	}
	d, err := queues.DecodeDelivery(got.Payload)
	if err != nil || d != (queues.Delivery{JobID: a.Job.ID, Attempt: 2}) {
		t.Fatalf("payload %q decodes to %+v (%v)", got.Payload, d, err)
	}
	if got.Type != want.Type || got.MaxRetry != want.MaxRetry || got.Timeout != want.Timeout || got.Deadline != want.Deadline ||
		got.Retention != want.Retention || got.State != want.State || got.Queue != want.Queue {
		t.Fatalf("the readmitted task reads as\n  %+v\nasynq.Client's as\n  %+v", got, want)
	}
	seen := make(chan string, len(later)+1)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{Concurrency: 1, Queues: map[string]int{qname: 1},
		TaskCheckInterval: 20 * time.Millisecond, LogLevel: asynq.FatalLevel})
	if err := srv.Start(asynq.HandlerFunc(func(_ context.Context, task *asynq.Task) error {
		if d, err := queues.DecodeDelivery(task.Payload()); err == nil {
			seen <- d.JobID
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	for i, want := range []string{a.Job.ID, later[0], later[1]} {
		select {
		case id := <-seen:
			if id != want {
				t.Fatalf("asynq's delivery %d is %s, want %s", i, id, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("asynq's server delivered nothing more after %d", i)
		}
	}
}
