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
	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/controller"
	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/queues"
)

// BenchmarkHybridTick is one leader tick (snapshot from Redis, Decide,
// apply) with 10,000 burst jobs queued and 2,000 core jobs running on 100
// fixed workers of 20 slots: fixed is full, so the plan only asks for
// elastic capacity, which without a provider changes nothing, and every
// tick sees the same state. cpu-ms/op is the controller process's CPU
// (user and system); Redis's own work is in wall time only.
func BenchmarkHybridTick(b *testing.B) {
	rdb, ns := testenv.Redis(b)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	core := jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Retryable: true, Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second)}
	burst := core
	burst.Class, burst.Checkpointable = jobs.ClassBurst, true
	for w := range 100 {
		id := fmt.Sprintf("fixed-%03d", w)
		if _, err := store.Register(ctx, queues.WorkerInfo{ID: id, Pool: "fixed", Slots: 20, Busy: 20, StartedAt: time.Now()}); err != nil {
			b.Fatal(err)
		}
		for range 20 {
			sub, err := store.Submit(ctx, core, queues.QueueCore)
			if err != nil {
				b.Fatal(err)
			}
			if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: sub.Job.Attempt}, id); err != nil || !ok {
				b.Fatalf("claim: %v %v", ok, err)
			}
		}
	}
	for range 10_000 {
		if _, err := store.Submit(ctx, burst, queues.QueueBurst); err != nil {
			b.Fatal(err)
		}
	}
	h := &controller.Hybrid{Store: store, Config: policy.DefaultConfig(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Pools: []policy.Pool{
			{Name: "fixed", Kind: policy.PoolFixed},
			{Name: "ondemand", Kind: policy.PoolOnDemand, PricePerSlotHour: 2.5, Billing: policy.BillingPerSecond,
				MaxWorkers: 100, SlotsPerWorker: 8, IdleTTL: time.Minute},
		}}
	s, err := h.Snapshot(ctx, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	if len(s.Jobs) != 12_000 || len(s.Workers) != 100 {
		b.Fatalf("snapshot of %d jobs and %d workers", len(s.Jobs), len(s.Workers))
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	start := cpu()
	var plan policy.Plan
	for b.Loop() {
		if plan, err = h.Tick(ctx, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	if plan.Count(policy.ScaleUp) != 1 || len(plan.Actions) != 1 {
		b.Fatalf("plan %s, want one scale-up", plan)
	}
}
