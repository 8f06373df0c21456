package queues_test

import (
	"context"
	"testing"
	"time"
)

// TestMarkStartedKeepsTheFirstMoment: the first call records its moment,
// later ones (a restart, another leader) leave it and read it back.
func TestMarkStartedKeepsTheFirstMoment(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	if got, err := s.Started(ctx); err != nil || !got.IsZero() {
		t.Fatalf("before any controller: %v %v, want the zero time", got, err)
	}
	t0 := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	for i, at := range []time.Time{t0, t0.Add(time.Hour), t0.Add(-time.Hour)} {
		got, err := s.MarkStarted(ctx, at)
		if err != nil || !got.Equal(t0) {
			t.Fatalf("call %d at %s: %v %v, want %s", i, at, got, err, t0)
		}
	}
	if got, err := s.Started(ctx); err != nil || !got.Equal(t0) {
		t.Fatalf("Started: %v %v, want %s", got, err, t0)
	}
}
