package controller_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
)

// A tick places a queued four-slot core job on the fixed worker that has
// the room, through that worker's own queue; once that worker leaves the
// registry, the next tick takes the placement back and places the job on
// the worker that is left.
func TestTickPlacesSizedJobsAndTakesBackOrphans(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	h := &controller.Hybrid{Store: store, Config: policy.DefaultConfig(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Pools: []policy.Pool{{Name: "fixed", Kind: policy.PoolFixed}}}
	now := time.Now()
	small := queues.WorkerInfo{ID: "small", Pool: "fixed", Slots: 2, StartedAt: now, PlaceQueue: string(queues.PlaceQueue("small"))}
	big := queues.WorkerInfo{ID: "big", Pool: "fixed", Slots: 4, StartedAt: now, PlaceQueue: string(queues.PlaceQueue("big"))}
	other := queues.WorkerInfo{ID: "other", Pool: "fixed", Slots: 4, StartedAt: now, PlaceQueue: string(queues.PlaceQueue("other"))}
	for _, w := range []queues.WorkerInfo{small, big} {
		if _, err := store.Heartbeat(ctx, w, nil); err != nil {
			t.Fatal(err)
		}
	}
	sp := jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second), Size: jobs.Size{Slots: 4}}
	sub, err := store.Submit(ctx, sp, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Tick(ctx, now); err != nil {
		t.Fatal(err)
	}
	j, _ := store.Get(ctx, sub.Job.ID)
	if len(j.Placed) != 1 || j.Placed[0] != "big" || j.Attempt != 2 {
		t.Fatalf("after the first tick: placed %v attempt %d, want on big at attempt 2 (plan %v)", j.Placed, j.Attempt, h.LastPlan().Actions)
	}
	// While it waits there, the next tick plans nothing more for it.
	if _, err := h.Tick(ctx, now.Add(time.Second/2)); err != nil {
		t.Fatal(err)
	}
	for _, a := range h.LastPlan().Actions {
		if a.Job == sub.Job.ID {
			t.Errorf("a placed job was planned again: %v", a)
		}
	}
	// big goes away (its registration is removed, as when it stops) and
	// another four-slot worker comes.
	if err := store.Deregister(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Heartbeat(ctx, other, nil); err != nil {
		t.Fatal(err)
	}
	// The take-back is the policy's: a plan holds it (rule 8's Unplace),
	// naming the worker gone.
	unplaced := false
	for i := 0; i < 3; i++ {
		if _, err := h.Tick(ctx, now.Add(time.Duration(i+1)*time.Second)); err != nil {
			t.Fatal(err)
		}
		for _, a := range h.LastPlan().Actions {
			if a.Kind == policy.Unplace && a.Job == sub.Job.ID && strings.Contains(a.Reason, "big gone") {
				unplaced = true
			}
		}
	}
	if !unplaced {
		t.Errorf("no plan took the placement on big back")
	}
	j, _ = store.Get(ctx, sub.Job.ID)
	if len(j.Placed) != 1 || j.Placed[0] != "other" || j.State != jobs.StateQueued {
		t.Errorf("after big left: placed %v state %s attempt %d, want placed on other", j.Placed, j.State, j.Attempt)
	}
}
