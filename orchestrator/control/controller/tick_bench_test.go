package controller_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
)

// tickBench is 10,000 burst jobs queued and 2,000 core jobs running on 100
// fixed workers of 20 slots: fixed is full, so the plan only asks for
// elastic capacity, which without a provider changes nothing.
type tickBench struct {
	store       *queues.Store
	h           *controller.Hybrid
	core, burst jobs.Spec
	running     []jobs.Job // by worker: running[w*20+k] runs on fixed-w
	queued      []jobs.Job // burst, oldest first
	// queuedCancel makes the churn cancel its oldest queued job while it
	// is queued, which no ended attempt reports: its departure does.
	// Otherwise the job starts and is cancelled running.
	queuedCancel bool
	// late, when set, is a store whose clock runs a minute behind, which
	// the churn submits its burst job through: the addition falls before
	// the tick's cursor, and the tick reads the active index whole.
	late *queues.Store
}

func newTickBench(b *testing.B) *tickBench {
	rdb, ns := testenv.Redis(b)
	t := &tickBench{store: queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})}
	ctx := context.Background()
	t.core = jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Retryable: true, Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second)}
	t.burst = t.core
	t.burst.Class, t.burst.Checkpointable = jobs.ClassBurst, true
	for w := range 100 {
		id := fmt.Sprintf("fixed-%03d", w)
		if _, err := t.store.Register(ctx, queues.WorkerInfo{ID: id, Pool: "fixed", Slots: 20, Busy: 20, StartedAt: time.Now()}); err != nil {
			b.Fatal(err)
		}
		for range 20 {
			t.running = append(t.running, t.start(b, id))
		}
	}
	for range 10_000 {
		t.queued = append(t.queued, t.submit(b, t.burst, queues.QueueBurst))
	}
	t.h = &controller.Hybrid{Store: t.store, Config: policy.DefaultConfig(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Pools: []policy.Pool{
			{Name: "fixed", Kind: policy.PoolFixed},
			{Name: "ondemand", Kind: policy.PoolOnDemand, PricePerSlotHour: 2.5, Billing: policy.BillingPerSecond,
				MaxWorkers: 100, SlotsPerWorker: 8, IdleTTL: time.Minute},
		}}
	s, err := t.h.Snapshot(ctx, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	if len(s.Jobs) != 12_000 || len(s.Workers) != 100 {
		b.Fatalf("snapshot of %d jobs and %d workers", len(s.Jobs), len(s.Workers))
	}
	return t
}

func (t *tickBench) submit(b *testing.B, spec jobs.Spec, q queues.Queue) jobs.Job {
	sub, err := t.store.Submit(context.Background(), spec, q)
	if err != nil {
		b.Fatal(err)
	}
	return sub.Job
}

// start submits a core job and claims it on worker.
func (t *tickBench) start(b *testing.B, worker string) jobs.Job {
	j := t.submit(b, t.core, queues.QueueCore)
	got, ok, err := t.store.Claim(context.Background(), queues.Delivery{JobID: j.ID, Attempt: j.Attempt}, worker)
	if err != nil || !ok {
		b.Fatalf("claim: %v %v", ok, err)
	}
	return got
}

// churn changes a handful of jobs the way a busy second does, leaving the
// counts as they were: a core job finishes and another starts in its slot,
// one is requeued and started again, a burst job is submitted and the
// oldest cancelled (queued, or once started: see queuedCancel).
func (t *tickBench) churn(b *testing.B, i int) {
	ctx := context.Background()
	k := i % len(t.running)
	worker := fmt.Sprintf("fixed-%03d", k/20)
	if ok, err := t.store.Finish(ctx, t.running[k], worker, jobs.StateSucceeded, new(int), ""); err != nil || !ok {
		b.Fatalf("finish: %v %v", ok, err)
	}
	t.running[k] = t.start(b, worker)
	k = (k + 7) % len(t.running)
	worker = fmt.Sprintf("fixed-%03d", k/20)
	r, err := t.store.Requeue(ctx, t.running[k], worker, queues.Requeue{Reason: "bench"})
	if err != nil || r.Attempt == 0 {
		b.Fatalf("requeue: %+v %v", r, err)
	}
	got, ok, err := t.store.Claim(ctx, queues.Delivery{JobID: t.running[k].ID, Attempt: r.Attempt}, worker)
	if err != nil || !ok {
		b.Fatalf("claim again: %v %v", ok, err)
	}
	t.running[k] = got
	if t.late != nil {
		sub, err := t.late.Submit(ctx, t.burst, queues.QueueBurst)
		if err != nil {
			b.Fatal(err)
		}
		t.queued = append(t.queued, sub.Job)
	} else {
		t.queued = append(t.queued, t.submit(b, t.burst, queues.QueueBurst))
	}
	if t.queuedCancel {
		if _, err := t.store.Cancel(ctx, t.queued[0].ID); err != nil {
			b.Fatal(err)
		}
	} else {
		got, ok, err := t.store.Claim(ctx, queues.Delivery{JobID: t.queued[0].ID, Attempt: t.queued[0].Attempt}, worker)
		if err != nil || !ok {
			b.Fatalf("claim of the oldest queued: %v %v", ok, err)
		}
		if ok, err := t.store.Finish(ctx, got, worker, jobs.StateCancelled, nil, "cancelled"); err != nil || !ok {
			b.Fatalf("cancel of the oldest queued, running: %v %v", ok, err)
		}
	}
	t.queued = t.queued[1:]
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run ticks b.N times, with churn (when set) between ticks outside the
// measured time. cpu-ms/op is the controller process's CPU (user and
// system) during the ticks; Redis's own work is in wall time only.
func (t *tickBench) run(b *testing.B, churn bool) {
	ctx := context.Background()
	if _, err := t.h.Tick(ctx, time.Now()); err != nil { // the first tick builds the kept view
		b.Fatal(err)
	}
	var plan policy.Plan
	var err error
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if churn {
			b.StopTimer()
			t.churn(b, i)
			b.StartTimer()
		}
		start := cpuTime()
		if plan, err = t.h.Tick(ctx, time.Now()); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - start
	}
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	if plan.Count(policy.ScaleUp) != 1 || len(plan.Actions) != 1 {
		b.Fatalf("plan %s, want one scale-up", plan)
	}
}

// BenchmarkHybridTick is one leader tick (read what changed, Decide,
// apply) after a handful of jobs changed, among 12,000 (see churn).
func BenchmarkHybridTick(b *testing.B) {
	newTickBench(b).run(b, true)
}

// BenchmarkHybridTickQueuedCancel is BenchmarkHybridTick with a queued
// job cancelled before every tick: its departure, not a whole read of the
// active index, tells the tick it left.
func BenchmarkHybridTickQueuedCancel(b *testing.B) {
	t := newTickBench(b)
	t.queuedCancel = true
	t.run(b, true)
}

// BenchmarkHybridTickWholeRead is BenchmarkHybridTick with a submission
// stamped by a clock a minute behind before every tick, which makes every
// tick read the active index whole: the fallback's cost.
func BenchmarkHybridTickWholeRead(b *testing.B) {
	t := newTickBench(b)
	t.late = queues.NewStore(t.store.Redis(), queues.StoreOptions{Namespace: t.store.Namespace().Name(),
		Now: func() time.Time { return time.Now().Add(-time.Minute) }})
	t.run(b, true)
}

// BenchmarkHybridTickRebuild is one leader tick that reads every active
// job and rebuilds the index, as every tick did before the view was kept
// and as one tick every RebuildEvery still does.
func BenchmarkHybridTickRebuild(b *testing.B) {
	t := newTickBench(b)
	t.h.RebuildEvery = time.Nanosecond
	t.run(b, false)
}
