package controller_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/leader"
)

func fastOptions(id string) controller.Options {
	return controller.Options{ID: id, Tick: 50 * time.Millisecond, WorkerTTL: 300 * time.Millisecond,
		LeaderTTL: 200 * time.Millisecond, OutboxGrace: 100 * time.Millisecond}
}

func TestOneLeaderAndFailover(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	a, err := controller.New(store, fastOptions("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := controller.New(store, fastOptions("b"))
	a.Start(context.Background())
	testenv.Eventually(t, 2*time.Second, "a leads", a.Leader)
	b.Start(context.Background())
	t.Cleanup(b.Stop)
	// b never leads while a renews.
	for i := 0; i < 10; i++ {
		if b.Leader() {
			t.Fatal("two leaders")
		}
		time.Sleep(30 * time.Millisecond)
	}
	start := time.Now()
	a.Stop() // resigns
	testenv.Eventually(t, 2*time.Second, "b takes over", b.Leader)
	t.Logf("handover after a clean stop: %s", time.Since(start))
}

func TestLeaderRecoversDeadWorkersJobs(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	sub, err := store.Submit(ctx, jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w-dead"); !ok {
		t.Fatal("claim")
	}
	store.Heartbeat(ctx, queues.WorkerInfo{ID: "w-dead", Slots: 1}, []queues.Delivery{{JobID: sub.Job.ID, Attempt: 1}})
	var mu sync.Mutex
	var got []queues.Recovered
	opts := fastOptions("c")
	opts.OnRecover = func(r queues.Recovered) { mu.Lock(); got = append(got, r); mu.Unlock() }
	pub := &eventList{}
	opts.Events = pub
	c, _ := controller.New(store, opts)
	c.Start(ctx)
	t.Cleanup(c.Stop)
	// Each tick's Redis calls are bounded to four ticks (200 ms): on a
	// loaded machine several ticks in a row can run out of it, and the
	// recovery is then only retried. The wait allows for that; what
	// recovery does is checked as strictly below.
	testenv.Eventually(t, 10*time.Second, "the dead worker's job is requeued", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 1
	})
	j, _ := store.Get(ctx, sub.Job.ID)
	if j.State != jobs.StateQueued || j.Attempt != 2 || j.Requeues != 1 || got[0].Worker != "w-dead" {
		t.Fatalf("after recovery: %+v, %+v", j, got[0])
	}
	// The requeue event names the new delivery and the one run so far.
	testenv.Eventually(t, 3*time.Second, "the job.requeued event", func() bool {
		for _, e := range pub.all() {
			if e.Type == events.TypeJobRequeued && e.JobID == sub.Job.ID {
				if e.Attempt != 2 || e.Runs != 1 {
					t.Fatalf("job.requeued with attempt %d runs %d, want delivery 2 of run 1", e.Attempt, e.Runs)
				}
				return true
			}
		}
		return false
	})
}

// eventList is a Publisher that keeps what it is given.
type eventList struct {
	mu sync.Mutex
	es []events.Event
}

func (l *eventList) Publish(_ context.Context, e events.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.es = append(l.es, e)
	return nil
}

func (l *eventList) all() []events.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]events.Event(nil), l.es...)
}

func TestOptionsValidate(t *testing.T) {
	if _, err := controller.New(nil, controller.Options{Tick: time.Second, WorkerTTL: time.Second}); err == nil {
		t.Fatal("a worker TTL under two ticks was accepted")
	}
}

// notKernel is a ControllerStore that is no queues.Kernel: New cannot
// find the lease of its namespace.
type notKernel struct{ controller.ControllerStore }

// TestNewNeedsALease: a store that is no kernel, with no Options.Lease,
// is refused at New rather than failing at every tick; given a lease, it
// is accepted.
func TestNewNeedsALease(t *testing.T) {
	if _, err := controller.New(notKernel{}, fastOptions("a")); err == nil {
		t.Fatal("a store with no lease was accepted")
	}
	rdb, ns := testenv.Redis(t)
	o := fastOptions("a")
	o.Lease = leader.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: ns}))
	if _, err := controller.New(notKernel{}, o); err != nil {
		t.Fatalf("with Options.Lease: %v", err)
	}
}
