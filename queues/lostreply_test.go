package queues_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// lossyStore is a store whose Redis connection runs through a proxy that
// can lose one reply after Redis carried out the command. go-redis's own
// retries are off, so the test sees the ambiguous error and makes the retry
// itself, as the worker's retry loop and the client's do.
type lossyStore struct {
	*queues.Store
	proxy *testenv.LossyProxy
	clock *clock
}

func newLossyStore(t *testing.T, opts queues.StoreOptions) lossyStore {
	return newLossyStoreRetrying(t, opts, -1)
}

// newLossyStoreRetrying is newLossyStore with go-redis resending a command
// whose reply was lost up to retries times on its own, as production
// clients do (-1: never).
func newLossyStoreRetrying(t *testing.T, opts queues.StoreOptions, retries int) lossyStore {
	t.Helper()
	direct, ns := testenv.Redis(t)
	p := testenv.NewLossyProxy(t, direct.Options().Addr)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: retries})
	t.Cleanup(func() { _ = rdb.Close() })
	if err := queues.LoadScripts(context.Background(), direct); err != nil {
		t.Fatal(err)
	}
	c := testenv.NewClock(time.Now())
	opts.Namespace, opts.Now = ns, c.Now
	return lossyStore{Store: queues.NewStore(rdb, opts), proxy: p, clock: c}
}

// loseNext makes the next command that names job lose its reply, and
// checks afterwards that one was lost.
func (s lossyStore) loseNext(t *testing.T, job string) func() {
	t.Helper()
	s.proxy.LoseNextReply([]byte(job))
	before := s.proxy.Lost()
	return func() {
		t.Helper()
		if s.proxy.Lost() != before+1 {
			t.Fatalf("the proxy lost %d replies, want 1: the test did not hit the command it meant to", s.proxy.Lost()-before)
		}
	}
}

func (s lossyStore) running(t *testing.T, key, worker string) jobs.Job {
	t.Helper()
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec(key), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	j, ok, err := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, worker)
	if err != nil || !ok {
		t.Fatalf("claim: ok=%v err=%v", ok, err)
	}
	return j
}

// A finish that committed but lost its reply is still reported as
// recorded when retried, so the worker announces the end; it is recorded
// once (one usage record), and another worker's finish is still refused.
func TestFinishWhoseReplyWasLostIsRepeatable(t *testing.T) {
	t.Parallel()
	s := newLossyStore(t, queues.StoreOptions{})
	ctx := context.Background()
	j := s.running(t, "", "w1")
	code := 0
	check := s.loseNext(t, j.ID)
	if _, err := s.Finish(ctx, j, "w1", jobs.StateSucceeded, &code, ""); err == nil {
		t.Fatal("the first finish returned no error though its reply was lost")
	}
	check()
	got, err := s.Get(ctx, j.ID)
	if err != nil || got.State != jobs.StateSucceeded {
		t.Fatalf("the lost finish did not commit: %+v %v", got, err)
	}
	ok, err := s.Finish(ctx, j, "w1", jobs.StateSucceeded, &code, "")
	if err != nil || !ok {
		t.Fatalf("retried finish: ok=%v err=%v, want recorded", ok, err)
	}
	if ok, err := s.Finish(ctx, j, "w2", jobs.StateSucceeded, &code, ""); ok || err != nil {
		t.Fatalf("finish by another worker: ok=%v err=%v, want refused", ok, err)
	}
	if ok, err := s.Finish(ctx, j, "w1", jobs.StateFailed, &code, "x"); ok || err != nil {
		t.Fatalf("finish with another outcome: ok=%v err=%v, want refused", ok, err)
	}
	us, err := usageIn(ctx, s.Store, s.clock.Now().Add(-time.Hour), s.clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, u := range us {
		if u.JobID == j.ID {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d usage records for the job, want 1: the retry recorded the attempt again", n)
	}
}

// A requeue that committed but lost its reply gives the same reply when
// retried (the new attempt, its queue, its reason), and counts once.
func TestRequeueWhoseReplyWasLostIsRepeatable(t *testing.T) {
	t.Parallel()
	s := newLossyStore(t, queues.StoreOptions{})
	ctx := context.Background()
	j := s.running(t, "", "w1")
	r := queues.Requeue{Retry: true, Reason: "exited with code 3"}
	check := s.loseNext(t, j.ID)
	if _, err := s.Requeue(ctx, j, "w1", r); err == nil {
		t.Fatal("the first requeue returned no error though its reply was lost")
	}
	check()
	moved, err := s.Requeue(ctx, j, "w1", r)
	if err != nil || moved.Attempt != 2 || moved.Queue != queues.QueueCore || moved.Reason != r.Reason || moved.Cancelled {
		t.Fatalf("retried requeue: %+v %v, want attempt 2 in core with the first try's reason", moved, err)
	}
	got, err := s.Get(ctx, j.ID)
	if err != nil || got.State != jobs.StateQueued || got.Attempt != 2 || got.Retries != 1 {
		t.Fatalf("after the retried requeue: %+v %v, want queued at attempt 2 with one retry", got, err)
	}
	// Not a blanket pass: a requeue of the same attempt by another worker,
	// or counted as something else, is still fenced.
	if moved, err := s.Requeue(ctx, j, "w2", r); err != nil || moved.Attempt != 0 {
		t.Fatalf("requeue by another worker: %+v %v, want fenced", moved, err)
	}
	if moved, err := s.Requeue(ctx, j, "w1", queues.Requeue{Reason: "draining"}); err != nil || moved.Attempt != 0 {
		t.Fatalf("a drain of the ended attempt: %+v %v, want fenced", moved, err)
	}
}

// The cancel path of a requeue (a cancel was pending) is repeatable too.
func TestRequeueThatCancelledIsRepeatable(t *testing.T) {
	t.Parallel()
	s := newLossyStore(t, queues.StoreOptions{})
	ctx := context.Background()
	j := s.running(t, "", "w1")
	if res, err := s.Cancel(ctx, j.ID); err != nil || res != queues.CancelRequested {
		t.Fatalf("cancel: %v %v", res, err)
	}
	check := s.loseNext(t, j.ID)
	if _, err := s.Requeue(ctx, j, "w1", queues.Requeue{Reason: "draining"}); err == nil {
		t.Fatal("the first requeue returned no error though its reply was lost")
	}
	check()
	moved, err := s.Requeue(ctx, j, "w1", queues.Requeue{Reason: "draining"})
	if err != nil || !moved.Cancelled {
		t.Fatalf("retried requeue: %+v %v, want cancelled", moved, err)
	}
}

// A cancel of a queued job that committed but lost its reply is announced
// when retried: the hook is told once, with the attempt that was waiting.
// Without the retry nobody would announce it.
func TestCancelWhoseReplyWasLostIsAnnounced(t *testing.T) {
	t.Parallel()
	type call struct {
		id      string
		attempt int
	}
	calls := make(chan call, 4)
	s := newLossyStore(t, queues.StoreOptions{OnQueuedCancel: func(_ context.Context, id string, attempt int, _ time.Time) {
		calls <- call{id, attempt}
	}})
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	check := s.loseNext(t, sub.Job.ID)
	if _, err := s.Cancel(ctx, sub.Job.ID); err == nil {
		t.Fatal("the first cancel returned no error though its reply was lost")
	}
	check()
	if len(calls) != 0 {
		t.Fatalf("the hook was called for a cancel whose reply was lost: %v", <-calls)
	}
	res, err := s.Cancel(ctx, sub.Job.ID)
	if err != nil || res != queues.AlreadyFinished {
		t.Fatalf("retried cancel: %v %v", res, err)
	}
	select {
	case got := <-calls:
		if got != (call{sub.Job.ID, 1}) {
			t.Fatalf("hook told %+v, want %s at attempt 1", got, sub.Job.ID)
		}
	default:
		t.Fatal("the retried cancel did not announce the cancel its first try made")
	}
	// Long after, a repeated cancel is a user's second try, not a retry:
	// the end was announced then.
	s.clock.Add(queues.RecentCancel + time.Second)
	if _, err := s.Cancel(ctx, sub.Job.ID); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 0 {
		t.Fatalf("the hook was told again long after the cancel: %v", <-calls)
	}
}

// A submit that committed but lost its reply, retried with its key, finds
// the job it made: one job, reported as a duplicate (which the intake
// announces again).
func TestSubmitWhoseReplyWasLostFindsItsJob(t *testing.T) {
	t.Parallel()
	s := newLossyStore(t, queues.StoreOptions{})
	ctx := context.Background()
	key := "lost-reply-" + testenv.RandomHex(4)
	check := s.loseNext(t, key)
	if _, err := s.Submit(ctx, spec(key), queues.QueueCore); err == nil {
		t.Fatal("the first submit returned no error though its reply was lost")
	}
	check()
	sub, err := s.Submit(ctx, spec(key), queues.QueueCore)
	if err != nil || !sub.Duplicate {
		t.Fatalf("retried submit: %+v %v, want the duplicate", sub, err)
	}
	all, err := s.List(ctx, queues.ListOptions{Limit: 10})
	if err != nil || len(all) != 1 || all[0].ID != sub.Job.ID {
		t.Fatalf("jobs on record: %d (%v), want the one job %s", len(all), err, sub.Job.ID)
	}
}

// go-redis resends a script whose reply it lost, with the same arguments.
// A submit without an idempotency key resent that way must not push its
// task twice, nor reset a job a worker claimed in between.
func TestSubmitResentByTheClientIsWrittenOnce(t *testing.T) {
	t.Parallel()
	s := newLossyStoreRetrying(t, queues.StoreOptions{}, 3)
	ctx := context.Background()
	sp := spec("")
	sp.Template = "resent-" + testenv.RandomHex(4)
	check := s.loseNext(t, sp.Template)
	sub, err := s.Submit(ctx, sp, queues.QueueCore)
	if err != nil || sub.Duplicate {
		t.Fatalf("submit resent by go-redis: %+v %v", sub, err)
	}
	check()
	if n := pending(t, s.Store, queues.QueueCore); n != 1 {
		t.Fatalf("%d tasks pending for one job", n)
	}
}

// A claim whose reply was lost is claimed when the same incarnation asks
// again, instead of leaving the job running on record with no process.
func TestClaimWhoseReplyWasLostIsRepeatable(t *testing.T) {
	t.Parallel()
	s := newLossyStore(t, queues.StoreOptions{})
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	d := queues.Delivery{JobID: sub.Job.ID, Attempt: 1}
	check := s.loseNext(t, sub.Job.ID)
	if _, _, err := s.ClaimAs(ctx, d, "w1", "inc-a"); err == nil {
		t.Fatal("the first claim returned no error though its reply was lost")
	}
	check()
	j, ok, err := s.ClaimAs(ctx, d, "w1", "inc-a")
	if err != nil || !ok || j.State != jobs.StateRunning || j.Worker != "w1" {
		t.Fatalf("retried claim: %+v ok=%v err=%v, want claimed by w1", j, ok, err)
	}
	if _, ok, _ := s.ClaimAs(ctx, d, "w2", "inc-b"); ok {
		t.Fatal("another worker claimed a running attempt")
	}
	if _, ok, _ := s.Claim(ctx, d, "w1"); ok {
		t.Fatal("a claim naming no incarnation was taken for a repeat")
	}
}
