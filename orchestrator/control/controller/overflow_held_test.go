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

// Live, a two-slot core job the full quota cannot start is held on the
// fixed worker until its own max wait; then the controller takes the
// reservation back (a new attempt, placed nowhere, its wait kept) and on
// the next tick sends it to the on-demand pool whose machines hold two
// slots, as the simulator does.
func TestHeldSizedCoreJobOverflowsPastItsWait(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	now := time.Now()
	submit := func(slots int, wait *jobs.Duration) jobs.Job {
		t.Helper()
		spec := jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Timeout: jobs.Duration(time.Hour),
			Grace: jobs.Duration(time.Second), CoreMaxWait: wait}
		spec.Size.Slots = slots
		sub, err := store.Submit(ctx, spec, queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		return sub.Job
	}
	blocker, ok, err := store.Claim(ctx, queues.Delivery{JobID: submit(1, nil).ID, Attempt: 1}, "f1")
	if !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	w := queues.WorkerInfo{ID: "f1", Pool: "fixed", Slots: 2, Busy: 1, StartedAt: now.Add(-time.Hour), PlaceQueue: string(queues.PlaceQueue("f1"))}
	if _, err := store.Heartbeat(ctx, w, []queues.Delivery{{JobID: blocker.ID, Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	wait := jobs.Duration(time.Minute)
	big := submit(2, &wait)

	cfg := policy.DefaultConfig()
	cfg.CoreOverflow = true
	pools := []policy.Pool{
		{Name: "fixed", Kind: policy.PoolFixed, PricePerSlotHour: 0.5},
		{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 1.5, MaxWorkers: 4, SlotsPerWorker: 2, IdleTTL: time.Hour, Billing: policy.BillingPerSecond},
	}
	h := &controller.Hybrid{Store: store, Config: cfg, Pools: pools, Events: &eventLog{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	get := func() jobs.Job {
		t.Helper()
		j, err := store.Get(ctx, big.ID)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}

	// Within its wait: held on f1.
	if _, err := h.Tick(ctx, now); err != nil {
		t.Fatal(err)
	}
	if j := get(); j.Queue != string(queues.QueueCore) || len(j.Placed) != 1 || j.Placed[0] != "f1" {
		t.Fatalf("within its wait: queue %s placed %v; want core, held on f1", j.Queue, j.Placed)
	}
	// Past it: the reservation is taken back, the wait kept.
	later := now.Add(2 * time.Minute)
	if _, err := h.Tick(ctx, later); err != nil {
		t.Fatal(err)
	}
	j := get()
	if j.Queue != string(queues.QueueCore) || len(j.Placed) != 0 || j.State != jobs.StateQueued || !j.QueuedAt.Equal(big.QueuedAt) {
		t.Fatalf("past its wait: queue %s placed %v %s queued %v; want core, placed nowhere, queued as at submit (%v)",
			j.Queue, j.Placed, j.State, j.QueuedAt, big.QueuedAt)
	}
	// And it overflows.
	if _, err := h.Tick(ctx, later); err != nil {
		t.Fatal(err)
	}
	if j := get(); j.Queue != string(queues.QueueOverflow) || j.State != jobs.StateQueued {
		t.Fatalf("after the take-back: queue %s %s; want overflow, queued", j.Queue, j.State)
	}
}
