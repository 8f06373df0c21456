package registry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
)

// TestWorkerIntents: drain and spot notice are recorded only for registered
// workers, a spot notice only for a spot worker, and the worker reads them
// in its beat.
func TestWorkerIntents(t *testing.T) {
	t.Parallel()
	r, s, c := newStore(t)
	ctx := context.Background()
	fixed := queues.WorkerInfo{ID: "f1", Pool: "fixed", Slots: 1, Incarnation: "x"}
	spot := queues.WorkerInfo{ID: "s1", Pool: "spot", Slots: 1, Incarnation: "y", Spot: true}
	s.Register(ctx, fixed)
	s.Register(ctx, spot)

	if err := r.RequestDrain(ctx, "nobody"); !errors.Is(err, registry.ErrUnknownWorker) {
		t.Fatalf("drain of an unknown worker: %v", err)
	}
	if err := r.RequestSpotNotice(ctx, "nobody", c.Now()); !errors.Is(err, registry.ErrUnknownWorker) {
		t.Fatalf("spot notice to an unknown worker: %v", err)
	}
	if err := r.RequestSpotNotice(ctx, "f1", c.Now()); !errors.Is(err, registry.ErrNotSpot) {
		t.Fatalf("spot notice to a fixed worker: %v", err)
	}
	if b, _ := s.Heartbeat(ctx, fixed, nil); b.Drain || !b.SpotNotice.IsZero() {
		t.Fatalf("intents appeared unasked: %+v", b)
	}

	if err := r.RequestDrain(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Heartbeat(ctx, fixed, nil); !b.Drain {
		t.Fatal("recorded drain not in the beat")
	}
	first := c.Now().Add(10 * time.Second).Truncate(time.Millisecond)
	if err := r.RequestSpotNotice(ctx, "s1", first); err != nil {
		t.Fatal(err)
	}
	r.RequestSpotNotice(ctx, "s1", first.Add(time.Minute)) // a later notice does not postpone the first
	if b, _ := s.Heartbeat(ctx, spot, nil); !b.SpotNotice.Equal(first) || b.Drain {
		t.Fatalf("spot beat: %+v, want notice at %s", b, first)
	}
	// A new incarnation starts with no intents.
	if b, _ := s.Register(ctx, queues.WorkerInfo{ID: "f1", Pool: "fixed", Slots: 1, Incarnation: "z"}); b.Drain {
		t.Fatal("a new incarnation inherited its predecessor's drain")
	}
}
