package workers_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// TestFinishWhoseReplyWasLostIsAnnounced is the failure seen with a Redis
// paused mid-write: the worker's finish commits, its reply is lost, the
// retry used to be told "attempt moved on", and job.succeeded was never
// published, so anything waiting on it hung. Now the retry learns its end
// is on record and the worker announces it.
func TestFinishWhoseReplyWasLostIsAnnounced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	proxy, store := lossyStore(t, e)

	srv := testenv.NATS(t)
	subj := events.Subjects{Prefix: e.ns}
	nc := testenv.NATSConn(t, srv)
	seen := testenv.CollectEvents(t, nc, subj.All())
	o := e.options()
	o.Events = eventbus.NewNATSPublisher(testenv.NATSConn(t, srv), subj)
	e.startOn(store, o)

	j := e.submit(e.shell(`while [ ! -e "$BALLAST_PARAM_DIR/go" ]; do sleep 0.02; done`), queues.QueueCore)
	e.waitFor(j.ID, wait, "running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
	// Only the finish names the outcome: heartbeats and claims carry the
	// job's ID but not "succeeded".
	proxy.LoseNextReply([]byte(jobs.StateSucceeded))
	e.touch("go")
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 1 {
		t.Fatalf("job %+v, want succeeded at its first attempt", got)
	}
	succeeded := func(ev events.Event) bool { return ev.JobID == j.ID && ev.Type == events.TypeJobSucceeded }
	testenv.Eventually(t, wait, "job.succeeded though the finish's reply was lost", func() bool { return seen.Any(succeeded) })
	if proxy.Lost() != 1 {
		t.Fatalf("the proxy lost %d replies, want 1: the test did not hit the finish", proxy.Lost())
	}
}

// TestTakeWhoseReplyWasLostRunsOnce: the worker's take commits (the job
// is claimed) but its reply is lost. The worker retries under the same
// token, is answered with the job it claimed, and runs it once, at its
// first attempt: nothing waits for a recovery, nothing runs twice.
func TestTakeWhoseReplyWasLostRunsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	proxy, store := lossyStore(t, e)

	var runs atomic.Int64
	o := e.options()
	o.Handlers = map[string]workers.Handler{"once": func(context.Context, *workers.Run) error {
		runs.Add(1)
		return nil
	}}
	j := e.submit(jobs.Spec{Handler: "once", Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	// Only a take names the core queue's paused marker: the submissions
	// do not go through the proxy, and the placement queue has its own.
	proxy.LoseNextReply([]byte("{" + e.store.Namespace().AsynqQueue(queues.QueueCore) + "}:paused"))
	e.startOn(store, o)
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 1 || got.Runs != 1 {
		t.Fatalf("job %s at attempt %d, runs %d; want succeeded at its first attempt, run once", got.State, got.Attempt, got.Runs)
	}
	if proxy.Lost() != 1 {
		t.Fatalf("the proxy lost %d replies, want 1: the test did not hit the take", proxy.Lost())
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the handler ran %d times", n)
	}
}

// lossyStore is a store of e's namespace that reaches Redis through a
// proxy the test can make lose a reply.
func lossyStore(t *testing.T, e *env) (*testenv.LossyProxy, *queues.Store) {
	proxy := testenv.NewLossyProxy(t, e.rdb.Options().Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1, PoolSize: 16})
	t.Cleanup(func() { _ = rdb.Close() })
	return proxy, queues.NewStore(rdb, queues.StoreOptions{Namespace: e.ns})
}
