package controller_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
)

// TestRepackMovesBurstWorkOffAWorker: live, rule 5's repack asks the
// worker running a checkpointable burst job on an under-used on-demand
// worker to checkpoint it back to an elastic queue, and drains that
// worker; the next tick plans no second move while the first is in
// flight, and once the job is requeued it goes nowhere else.
func TestRepackMovesBurstWorkOffAWorker(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	now := time.Now()
	beat := beater(t, store, now.Add(-time.Hour))
	start := func(spec jobs.Spec, q queues.Queue, worker string) queues.Delivery {
		t.Helper()
		sub, err := store.Submit(ctx, spec, q)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, worker); !ok || err != nil {
			t.Fatalf("claim on %s: %v %v", worker, ok, err)
		}
		return queues.Delivery{JobID: sub.Job.ID, Attempt: 1}
	}
	spec := func(class jobs.Class, ckpt bool) jobs.Spec {
		return jobs.Spec{Command: []string{"true"}, Class: class, Checkpointable: ckpt, Retryable: ckpt,
			Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second)}
	}
	// The quota is full of core work: above the high watermark, so rule 4
	// stays out of it and what moves is rule 5's.
	f1 := start(spec(jobs.ClassCore, false), queues.QueueCore, "f1")
	f2 := start(spec(jobs.ClassCore, false), queues.QueueCore, "f1")
	beat("f1", "fixed", 2, f1, f2)
	// od-1 runs one checkpointable burst job on 4 slots; od-2 runs one
	// that cannot checkpoint, and has 3 free.
	moved := start(spec(jobs.ClassBurst, true), queues.QueueOnDemand, "od-1")
	stays := start(spec(jobs.ClassBurst, false), queues.QueueOnDemand, "od-2")
	beat("od-1", "od", 4, moved)
	beat("od-2", "od", 4, stays)

	pools := []policy.Pool{
		{Name: "fixed", Kind: policy.PoolFixed, PricePerSlotHour: 0.5},
		{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 1.5, MaxWorkers: 4, SlotsPerWorker: 4,
			Billing: policy.BillingPerSecond, StartupDelay: time.Minute},
	}
	h := &controller.Hybrid{Store: store, Config: policy.DefaultConfig(), Pools: pools,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	plan, err := h.Tick(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var repacked, drained bool
	for _, a := range plan.Actions {
		repacked = repacked || a.Kind == policy.Repack && a.Job == moved.JobID && a.Worker == "od-1"
		drained = drained || a.Kind == policy.Drain && a.Worker == "od-1" && a.Rule == 5
		if a.Job == stays.JobID {
			t.Fatalf("the job that cannot checkpoint moves: %s", a)
		}
	}
	if !repacked || !drained {
		t.Fatalf("plan %v; want %s repacked off od-1 and od-1 drained", plan.Actions, moved.JobID)
	}
	// od-1's next heartbeat reads the drain.
	b, err := store.Heartbeat(ctx, queues.WorkerInfo{ID: "od-1", Pool: "od", Slots: 4, Busy: 1, StartedAt: now.Add(-time.Hour)}, []queues.Delivery{moved})
	if err != nil || !b.Drain {
		t.Fatalf("od-1's heartbeat: %+v %v; want the drain", b, err)
	}
	// While the checkpoint is in flight the next tick plans nothing for
	// the job or the worker again.
	plan, err = h.Tick(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range plan.Actions {
		if a.Job == moved.JobID || a.Worker == "od-1" && a.Kind == policy.Drain {
			t.Fatalf("planned again while in flight: %s", a)
		}
	}
	// The worker acts on the request: the next attempt waits in an
	// elastic queue, where od-2's free slots take it.
	run, err := store.Get(ctx, moved.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Requeue(ctx, run, "od-1", queues.Requeue{Preempt: true}); err != nil {
		t.Fatal(err)
	}
	back, err := store.Get(ctx, moved.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if !queues.Queue(back.Queue).Elastic() || back.Attempt != 2 || back.State != jobs.StateQueued {
		t.Fatalf("after the repack: queue %s attempt %d %s; want an elastic queue, attempt 2, queued", back.Queue, back.Attempt, back.State)
	}
}
