package queues_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/logs"
	"github.com/ballastdev/ballast/queues/registry"
)

// clock is the tests' hand-moved clock.
type clock = testenv.Clock

func newStore(t *testing.T) (*queues.Store, *clock) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	c := testenv.NewClock(time.Now())
	return queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, Now: c.Now}), c
}

func spec(key string) jobs.Spec {
	return jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second), IdempotencyKey: key}
}

func pending(t *testing.T, s *queues.Store, q queues.Queue) int {
	t.Helper()
	st, err := s.QueueStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range st {
		if x.Queue == q {
			return x.Pending + x.Scheduled
		}
	}
	return -1
}

func TestSubmitClaimFinish(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if sub.Duplicate || sub.Job.Attempt != 1 || sub.Job.State != jobs.StateQueued {
		t.Fatalf("unexpected submit result %+v", sub)
	}
	if n := pending(t, s, queues.QueueCore); n != 1 {
		t.Fatalf("core pending = %d, want 1", n)
	}
	d := queues.Delivery{JobID: sub.Job.ID, Attempt: 1}
	j, ok, err := s.Claim(ctx, d, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: ok=%v err=%v", ok, err)
	}
	if j.State != jobs.StateRunning || j.Worker != "w1" || j.Spec.Command[0] != "true" {
		t.Fatalf("claimed record %+v", j)
	}
	// A second delivery of the same attempt (asynq redelivery) is stale.
	if _, ok, err := s.Claim(ctx, d, "w2"); ok || err != nil {
		t.Fatalf("second claim: ok=%v err=%v, want stale", ok, err)
	}
	code := 0
	if ok, err := s.Finish(ctx, j, "w2", jobs.StateSucceeded, &code, ""); ok || err != nil {
		t.Fatalf("finish by the wrong worker: ok=%v err=%v", ok, err)
	}
	if ok, err := s.Finish(ctx, j, "w1", jobs.StateSucceeded, &code, ""); !ok || err != nil {
		t.Fatalf("finish: ok=%v err=%v", ok, err)
	}
	got, err := s.Get(ctx, j.ID)
	if err != nil || got.State != jobs.StateSucceeded || got.ExitCode == nil || *got.ExitCode != 0 || got.FinishedAt.IsZero() {
		t.Fatalf("after finish: %+v %v", got, err)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("Get unknown: %v", err)
	}
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	a, err := s.Submit(ctx, spec("k1"), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Submit(ctx, spec("k1"), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Duplicate || b.Job.ID != a.Job.ID {
		t.Fatalf("same key gave %+v, want duplicate of %s", b, a.Job.ID)
	}
	// A retry from another trace is the same request.
	traced := spec("k1")
	traced.TraceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	if c, err := s.Submit(ctx, traced, queues.QueueCore); err != nil || !c.Duplicate || c.Job.ID != a.Job.ID {
		t.Fatalf("same key from another trace gave %+v, %v; want duplicate of %s", c, err, a.Job.ID)
	}
	other := spec("k1")
	other.Command = []string{"false"}
	if _, err := s.Submit(ctx, other, queues.QueueCore); !errors.Is(err, jobs.ErrIdempotencyConflict) {
		t.Fatalf("reused key with another request: %v", err)
	}
	if n := pending(t, s, queues.QueueCore); n != 1 {
		t.Fatalf("core pending = %d, want 1", n)
	}
	list, err := s.List(ctx, queues.ListOptions{})
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %d jobs, err %v", len(list), err)
	}
}

func TestRequeueFencesTheOldAttempt(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, spec(""), queues.QueueLoan)
	j, ok, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w1")
	if !ok {
		t.Fatal("claim failed")
	}
	if ok, _ := s.Checkpoint(ctx, j, "w1", "step-7"); !ok {
		t.Fatal("checkpoint not recorded")
	}
	r, err := s.Requeue(ctx, j, "w1", queues.Requeue{Queue: queues.QueueBurst, Reason: "reclaimed", NotBefore: c.Now().Add(time.Minute)})
	if err != nil || r.Attempt != 2 {
		t.Fatalf("requeue: %+v %v", r, err)
	}
	// The old attempt can neither finish nor checkpoint nor requeue again.
	code := 0
	if ok, _ := s.Finish(ctx, j, "w1", jobs.StateSucceeded, &code, ""); ok {
		t.Fatal("stale attempt finished")
	}
	if ok, _ := s.Checkpoint(ctx, j, "w1", "step-9"); ok {
		t.Fatal("stale attempt checkpointed")
	}
	// The same requeue again (a retry after a lost reply) gets the same
	// reply and moves nothing (the record below still shows one requeue);
	// a different one is fenced.
	if r2, _ := s.Requeue(ctx, j, "w1", queues.Requeue{}); r2 != r {
		t.Fatalf("repeated requeue: %+v, want the first reply %+v", r2, r)
	}
	if r2, _ := s.Requeue(ctx, j, "w1", queues.Requeue{Retry: true, Reason: "exit 1"}); r2.Attempt != 0 {
		t.Fatal("stale attempt requeued twice")
	}
	if _, ok, _ := s.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: 1}, "w2"); ok {
		t.Fatal("old delivery claimed")
	}
	got, _ := s.Get(ctx, j.ID)
	if got.Attempt != 2 || got.Queue != "burst" || got.Checkpoint != "step-7" || got.Requeues != 1 || got.State != jobs.StateQueued {
		t.Fatalf("after requeue: %+v", got)
	}
	if n := pending(t, s, queues.QueueBurst); n != 1 {
		t.Fatalf("burst pending+scheduled = %d, want 1", n)
	}
	if _, ok, _ := s.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: 2}, "w2"); !ok {
		t.Fatal("new attempt not claimable")
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	q, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	if res, err := s.Cancel(ctx, q.Job.ID); res != queues.Cancelled || err != nil {
		t.Fatalf("cancel queued: %v %v", res, err)
	}
	if n := pending(t, s, queues.QueueCore); n != 0 {
		t.Fatalf("cancelled task still pending (%d)", n)
	}
	if _, ok, _ := s.Claim(ctx, queues.Delivery{JobID: q.Job.ID, Attempt: 1}, "w"); ok {
		t.Fatal("cancelled job claimed")
	}
	r, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	j, _, _ := s.Claim(ctx, queues.Delivery{JobID: r.Job.ID, Attempt: 1}, "w")
	if res, _ := s.Cancel(ctx, j.ID); res != queues.CancelRequested {
		t.Fatalf("cancel running: %v", res)
	}
	beat, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w"}, []queues.Delivery{{JobID: j.ID, Attempt: 1}})
	if err != nil || len(beat.Cancel) != 1 || beat.Cancel[0] != j.ID {
		t.Fatalf("heartbeat did not report the cancel: %+v %v", beat, err)
	}
	// A drain racing the cancel ends the job as cancelled, not requeued.
	if res, _ := s.Requeue(ctx, j, "w", queues.Requeue{Reason: "draining"}); !res.Cancelled {
		t.Fatalf("requeue of a cancel-requested job: %+v", res)
	}
	if res, _ := s.Cancel(ctx, j.ID); res != queues.AlreadyFinished {
		t.Fatalf("cancel finished: %v", res)
	}
	if _, err := s.Cancel(ctx, "missing"); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("cancel missing: %v", err)
	}
}

func TestDeadWorkerRecovery(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	var running []queues.Delivery
	for i := 0; i < 3; i++ {
		sub, _ := s.Submit(ctx, spec(""), queues.QueueCore)
		if _, ok, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "dead"); !ok {
			t.Fatal("claim")
		}
		running = append(running, queues.Delivery{JobID: sub.Job.ID, Attempt: 1})
	}
	if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "dead", Slots: 3}, running); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "alive", Slots: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if rec, _ := s.RecoverDeadWorkers(ctx, 5*time.Second); len(rec) != 0 {
		t.Fatalf("recovered %d jobs of live workers", len(rec))
	}
	c.Add(4 * time.Second)
	s.Heartbeat(ctx, queues.WorkerInfo{ID: "alive", Slots: 1}, nil)
	c.Add(2 * time.Second)
	rec, err := s.RecoverDeadWorkers(ctx, 5*time.Second)
	if err != nil || len(rec) != 3 {
		t.Fatalf("recovered %d (%v), want 3", len(rec), err)
	}
	for _, r := range rec {
		if r.Attempt != 2 || r.Worker != "dead" {
			t.Fatalf("recovered %+v", r)
		}
	}
	ws, _ := registry.New(s).Workers(ctx)
	if len(ws) != 1 || ws[0].ID != "alive" {
		t.Fatalf("registry after recovery: %+v", ws)
	}
	// The dead worker, if it was only slow, learns it is fenced.
	beat, _ := s.Heartbeat(ctx, queues.WorkerInfo{ID: "dead"}, running)
	if !beat.Fenced {
		t.Fatal("a recovered worker was not fenced")
	}
	// Nor can it claim anything under the fenced identity.
	if _, ok, err := s.Claim(ctx, queues.Delivery{JobID: rec[0].JobID, Attempt: 2}, "dead"); ok || !errors.Is(err, queues.ErrFenced) {
		t.Fatalf("fenced worker claimed: ok=%v err=%v", ok, err)
	}
	if n := pending(t, s, queues.QueueCore); n != 6 {
		// 3 first-attempt tasks still pending (never dequeued in this test) + 3 new attempts.
		t.Fatalf("core pending = %d, want 6", n)
	}
	if rec, _ := s.RecoverDeadWorkers(ctx, 5*time.Second); len(rec) != 0 {
		t.Fatal("recovered twice")
	}
}

func TestHeartbeatReportsLostAttempts(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	j, _, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w")
	if _, err := s.Requeue(ctx, j, "", queues.Requeue{Reason: "moved by controller"}); err != nil {
		t.Fatal(err)
	}
	beat, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w"}, []queues.Delivery{{JobID: j.ID, Attempt: 1}})
	if err != nil || len(beat.Lost) != 1 {
		t.Fatalf("beat %+v %v, want one lost job", beat, err)
	}
}

// With the enqueue separate from the record (Redis Cluster; every move and
// requeue), a crash in between leaves an outbox entry the reconciler
// enqueues.
func TestOutboxReconcilesUnconfirmedAttempts(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	c := testenv.NewClock(time.Now())
	s := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, Now: c.Now, SeparateEnqueue: true})
	ctx := context.Background()
	sub, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	// Simulate a submitter that died after the record and before the task.
	if err := testenvDeleteTasks(s, queues.QueueCore); err != nil {
		t.Fatal(err)
	}
	if n := pending(t, s, queues.QueueCore); n != 0 {
		t.Fatalf("pending %d after delete", n)
	}
	if n, _ := s.ReconcileOutbox(ctx, 5*time.Second, 0); n != 0 {
		t.Fatalf("reconciled %d entries younger than the grace", n)
	}
	c.Add(6 * time.Second)
	if n, err := s.ReconcileOutbox(ctx, 5*time.Second, 0); n != 1 || err != nil {
		t.Fatalf("reconciled %d (%v), want 1", n, err)
	}
	if n := pending(t, s, queues.QueueCore); n != 1 {
		t.Fatalf("pending %d after reconcile, want 1", n)
	}
	// Confirmed: a second pass does nothing.
	if n, _ := s.ReconcileOutbox(ctx, 5*time.Second, 0); n != 0 {
		t.Fatalf("second reconcile did %d", n)
	}
	if _, ok, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w"); !ok {
		t.Fatal("reconciled job not claimable")
	}
}

// TestEveryCancelPathExpiresTheJobsKeys: a job that ends cancelled, whether
// before it started, by a drain racing the cancel, or with its worker lost,
// keeps its record, log and metrics only for the retention period.
func TestEveryCancelPathExpiresTheJobsKeys(t *testing.T) {
	t.Parallel()
	s, clk := newStore(t)
	ctx := context.Background()
	rdb, ns := s.Redis(), s.Namespace()
	// running submits a job, claims it as worker w, gives it a log line and
	// a metric, and asks for its cancel.
	running := func(w string) jobs.Job {
		r, err := s.Submit(ctx, spec(""), queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		j, ok, err := s.Claim(ctx, queues.Delivery{JobID: r.Job.ID, Attempt: 1}, w)
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if err := logs.New(s).AppendLogs(ctx, j.ID, []logs.Line{{Attempt: 1, Stream: "stdout", Text: "hi"}}, 10); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.ReportMetric(ctx, j, w, 0.5); err != nil || !ok {
			t.Fatalf("metric: %v %v", ok, err)
		}
		if _, err := s.Cancel(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
		return j
	}
	expiring := func(how, id string) {
		t.Helper()
		for _, k := range []string{ns.Job(id), ns.JobLog(id), ns.JobMetrics(id)} {
			if ttl := rdb.PTTL(ctx, k).Val(); ttl <= 0 {
				t.Errorf("%s: %s has no expiry (PTTL %v)", how, k, ttl)
			}
		}
	}

	drained := running("w1")
	if res, err := s.Requeue(ctx, drained, "w1", queues.Requeue{Reason: "draining"}); err != nil || !res.Cancelled {
		t.Fatalf("requeue of a cancel-requested job: %+v %v", res, err)
	}
	expiring("drain racing a cancel", drained.ID)

	lost := running("w2")
	if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w2"}, []queues.Delivery{{JobID: lost.ID, Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	if _, err := s.RecoverDeadWorkers(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if j, _ := s.Get(ctx, lost.ID); j.State != jobs.StateCancelled {
		t.Fatalf("the lost worker's cancel-requested job is %s", j.State)
	}
	expiring("worker lost", lost.ID)
	// Its usage entry ends at the worker's last beat, a minute back: the
	// departure is stamped now, where a reader of changes looks.
	if at, err := rdb.ZScore(ctx, ns.Departed(), lost.ID).Result(); err != nil || int64(at) != clk.Now().UnixMilli() {
		t.Errorf("the lost worker's cancelled job departed at %v (%v), want now, %d", at, err, clk.Now().UnixMilli())
	}

	q, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	if err := logs.New(s).AppendLogs(ctx, q.Job.ID, []logs.Line{{Attempt: 1, Stream: "stdout", Text: "x"}}, 10); err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Cancel(ctx, q.Job.ID); res != queues.Cancelled {
		t.Fatalf("cancel queued: %v", res)
	}
	for _, k := range []string{ns.Job(q.Job.ID), ns.JobLog(q.Job.ID)} {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl <= 0 {
			t.Errorf("cancelled before it started: %s has no expiry (PTTL %v)", k, ttl)
		}
	}
}

// TestQueueStatsCountWhatRuns: a queue's Active is its attempts running on
// registered workers, read from their records (a worker that takes its
// deliveries leaves nothing in asynq's active list), and drops as they end.
func TestQueueStatsCountWhatRuns(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 4, StartedAt: c.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	claim := func(q queues.Queue) jobs.Job {
		t.Helper()
		sub, err := s.Submit(ctx, spec(""), q)
		if err != nil {
			t.Fatal(err)
		}
		j, ok, err := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w1")
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		return j
	}
	active := func() map[queues.Queue]int {
		t.Helper()
		st, err := s.QueueStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[queues.Queue]int{}
		for _, q := range st {
			out[q.Queue] = q.Active
		}
		return out
	}
	core1, _, burst := claim(queues.QueueCore), claim(queues.QueueCore), claim(queues.QueueBurst)
	if _, err := s.Submit(ctx, spec(""), queues.QueueBurst); err != nil { // queued, not active
		t.Fatal(err)
	}
	if a := active(); a[queues.QueueCore] != 2 || a[queues.QueueBurst] != 1 {
		t.Fatalf("active by queue %v, want core 2, burst 1", a)
	}
	for _, j := range []jobs.Job{core1, burst} {
		if ok, err := s.Finish(ctx, j, "w1", jobs.StateSucceeded, new(int), ""); err != nil || !ok {
			t.Fatalf("finish: %v %v", ok, err)
		}
	}
	if a := active(); a[queues.QueueCore] != 1 || a[queues.QueueBurst] != 0 {
		t.Fatalf("active by queue after two ends %v, want core 1, burst 0", a)
	}
}
