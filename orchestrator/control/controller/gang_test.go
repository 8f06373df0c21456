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
	"github.com/ballastdev/ballast/queues/gangs"
)

// A running gang holds its slots on every member's worker, not only on the
// worker the record names (member 0's).
func TestSnapshotCountsEveryGangMember(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	for _, id := range []string{"w0", "w1"} {
		if _, err := store.Heartbeat(ctx, queues.WorkerInfo{ID: id, Pool: "fixed", Slots: 4, StartedAt: time.Now(),
			PlaceQueue: string(queues.PlaceQueue(id))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	spec := jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Timeout: jobs.Duration(time.Hour),
		Grace: jobs.Duration(time.Second), Size: jobs.Size{Slots: 2, Replicas: 2}}
	sub, err := store.Submit(ctx, spec, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	a, err := store.Place(ctx, sub.Job.ID, 1, []string{"w0", "w1"})
	if err != nil || a == 0 {
		t.Fatalf("Place = %d, %v", a, err)
	}
	for i, w := range []string{"w0", "w1"} {
		d := queues.Delivery{JobID: sub.Job.ID, Attempt: a, Slots: 2, Member: i, Members: 2}
		if _, ok, err := gangs.New(store).ClaimMember(ctx, d, 2, w, "", "h:1"); !ok || err != nil {
			t.Fatalf("claim of member %d: %v %v", i, ok, err)
		}
	}
	h := &controller.Hybrid{Store: store, Config: policy.DefaultConfig(),
		Pools:  []policy.Pool{{Name: "fixed", Kind: policy.PoolFixed, PricePerSlotHour: 1}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s, err := h.Snapshot(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	busy := map[string]int{}
	for _, w := range s.Workers {
		busy[w.ID] = w.Busy
	}
	if busy["w0"] != 2 || busy["w1"] != 2 {
		t.Fatalf("busy slots %v, want 2 on each member's worker", busy)
	}
}
