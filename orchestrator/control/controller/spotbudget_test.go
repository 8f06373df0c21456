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

// A job the spot market has taken MaxSpotPreemptions times goes to ondemand,
// where spot workers never look; preemptions by the controller do not count.
func TestSpentSpotBudgetMovesAJobToOnDemand(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	spec := jobs.Spec{Command: []string{"true"}, Class: jobs.ClassBurst, Checkpointable: true, Retryable: true,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
	sub, err := store.Submit(ctx, spec, controller.Router{ElasticManaged: true}.Route(spec))
	if err != nil || sub.Job.Queue != string(queues.QueueBurst) {
		t.Fatalf("submit: %+v %v", sub, err)
	}
	cfg := policy.DefaultConfig()
	cfg.MaxSpotPreemptions = 2
	h := &controller.Hybrid{Store: store, Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

	// preempt runs the current attempt on a spot worker and sends it back to
	// burst, as a spot notice (spot) or the controller (not spot) would.
	preempt := func(spot bool) {
		t.Helper()
		cur, _ := store.Get(ctx, sub.Job.ID)
		j, ok, err := store.Claim(ctx, queues.Delivery{JobID: cur.ID, Attempt: cur.Attempt}, "spot-w")
		if !ok || err != nil {
			t.Fatalf("claim attempt %d: %v %v", cur.Attempt, ok, err)
		}
		if _, err := store.RequestPreempt(ctx, j.ID, j.Attempt, queues.QueueBurst, "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Requeue(ctx, j, "spot-w", queues.Requeue{Preempt: true, Spot: spot}); err != nil {
			t.Fatal(err)
		}
	}
	tick := func() jobs.Job {
		t.Helper()
		if _, err := h.Tick(ctx, time.Now()); err != nil {
			t.Fatalf("Tick: %v", err)
		}
		j, _ := store.Get(ctx, sub.Job.ID)
		return j
	}

	preempt(false) // reclaimed for core: no spot budget spent
	preempt(true)
	if j := tick(); j.Queue != string(queues.QueueBurst) || j.SpotPreemptions != 1 || j.Preemptions != 2 {
		t.Fatalf("one spot reclaim of two: queue %s spot %d all %d, want burst 1 2", j.Queue, j.SpotPreemptions, j.Preemptions)
	}
	preempt(true)
	j := tick()
	if j.Queue != string(queues.QueueOnDemand) || j.SpotPreemptions != 2 || j.State != jobs.StateQueued {
		t.Fatalf("budget spent: queue %s spot %d state %s, want ondemand 2 queued", j.Queue, j.SpotPreemptions, j.State)
	}
	// And it stays there.
	if again := tick(); again.Queue != string(queues.QueueOnDemand) || again.Attempt != j.Attempt {
		t.Fatalf("moved again: %s attempt %d", again.Queue, again.Attempt)
	}
}
