package controller_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestLeaderMovesOnADeliveryTakenButNeverClaimed: a worker that took a
// task and died (here: froze, in a handler that never claims) before its
// claim holds an attempt no worker's record shows. The leader moves it on
// after the grace, and a late claim of the old delivery is stale, so the
// job runs once, on its new attempt. Found by `ballast chaos run`: before,
// such a job waited for asynq's lease, 60 to 90 s.
func TestLeaderMovesOnADeliveryTakenButNeverClaimed(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	sub, err := store.Submit(ctx, jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassCore,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	testenv.HoldTask(t, rdb, store.Namespace().AsynqQueue(queues.QueueCore)) // frozen before its claim

	opts := fastOptions("a")
	opts.HeldGrace = 300 * time.Millisecond
	// The test ticks by hand, so Tick only bounds each tick (four times
	// it): fastOptions' 200 ms was too little on a loaded machine, and a
	// tick whose look for held deliveries timed out never saw this one.
	// The TTLs must be two ticks.
	opts.Tick, opts.LeaderTTL = 150*time.Millisecond, 300*time.Millisecond
	ctl, err := controller.New(store, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctl.Tick(ctx) // takes the lease; Redis is fresh, so no moves before a worker TTL
	time.Sleep(opts.WorkerTTL)
	ctl.Tick(ctx) // sees it held
	if j, _ := store.Get(ctx, sub.Job.ID); j.Attempt != 1 {
		t.Fatalf("moved at first sight: attempt %d", j.Attempt)
	}
	time.Sleep(opts.HeldGrace)
	ctl.Tick(ctx)
	j, err := store.Get(ctx, sub.Job.ID)
	if err != nil || j.Attempt != 2 || j.State != jobs.StateQueued || !j.Readmitted {
		t.Fatalf("after the grace: %+v %v, want queued at attempt 2, readmitted (ahead of later jobs)", j, err)
	}
	if _, ok, _ := store.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: 1}, "late"); ok {
		t.Fatal("the held delivery could still be claimed")
	}
	if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: 2}, "w2"); !ok || err != nil {
		t.Fatalf("the new attempt: ok %v err %v", ok, err)
	}
	// A running job's active task is not held.
	ctl.Tick(ctx)
	if j, _ := store.Get(ctx, sub.Job.ID); j.Attempt != 2 || j.State != jobs.StateRunning {
		t.Fatalf("a claimed attempt was moved: %+v", j)
	}
}
