package flows_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
	"github.com/ballastdev/ballast/queues/flows"
)

// trialSpecs returns n trial specs told apart by their command.
func trialSpecs(n int) []jobs.Spec {
	out := make([]jobs.Spec, n)
	for i := range out {
		out[i] = spec("")
		out[i].Command = []string{"echo", string(rune('a' + i))}
	}
	return out
}

// TestCreateSweepIdempotent: the same key and spec return the first
// sweep; the same key with another spec is a conflict; without a key
// every call is a sweep of its own.
func TestCreateSweepIdempotent(t *testing.T) {
	t.Parallel()
	s, _, _ := newStores(t)
	ctx := context.Background()
	ns := flows.NewSweep{Spec: sweep.Spec{Template: "t", IdempotencyKey: "k", MaxParallel: 2}, Trials: trialSpecs(3), Fingerprint: "f1"}
	first, dup, err := s.CreateSweep(ctx, ns)
	if err != nil || dup {
		t.Fatalf("first CreateSweep: dup=%v err=%v", dup, err)
	}
	if first.State != flows.SweepRunning || first.Total != 3 || first.Cursor != 0 || first.Spec.MaxParallel != 2 {
		t.Fatalf("new sweep %+v", first)
	}
	again, dup, err := s.CreateSweep(ctx, ns)
	if err != nil || !dup || again.ID != first.ID {
		t.Fatalf("retry: %s dup=%v err=%v; want sweep %s again", again.ID, dup, err, first.ID)
	}
	ns.Fingerprint = "f2"
	if _, _, err := s.CreateSweep(ctx, ns); !errors.Is(err, jobs.ErrIdempotencyConflict) {
		t.Fatalf("same key, other spec: %v, want ErrIdempotencyConflict", err)
	}
	ns.Spec.IdempotencyKey = ""
	other, _, err := s.CreateSweep(ctx, ns)
	if err != nil || other.ID == first.ID {
		t.Fatalf("without a key: %s, %v; want a new sweep", other.ID, err)
	}
	specs, err := s.TrialSpecs(ctx, first.ID, 1, 3)
	if err != nil || len(specs) != 2 || specs[0].Command[1] != "b" || specs[1].Command[1] != "c" {
		t.Fatalf("TrialSpecs(1, 3) = %+v, %v; want trials b and c", specs, err)
	}
	if _, err := s.GetSweep(ctx, "nope"); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("GetSweep of an unknown sweep: %v, want ErrNotFound", err)
	}
}

// TestSweepCancelAndFinish: trials recorded after a cancel are still
// recorded (so the cancel finds them) but move no cursor; the caller
// learns of the cancel; finishing keeps the cancel and leaves the active
// set once.
func TestSweepCancelAndFinish(t *testing.T) {
	t.Parallel()
	s, _, clk := newStores(t)
	ctx := context.Background()
	rec, _, err := s.CreateSweep(ctx, flows.NewSweep{Spec: sweep.Spec{Template: "t"}, Trials: trialSpecs(4)})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := s.RecordTrials(ctx, rec.ID, map[int]string{0: "j0", 1: "j1"}, 2); err != nil || st != flows.SweepRunning {
		t.Fatalf("RecordTrials = %q, %v", st, err)
	}
	if err := s.StopTrial(ctx, rec.ID, 1); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second)
	if ok, err := s.CancelSweep(ctx, rec.ID); !ok || err != nil {
		t.Fatalf("CancelSweep: %v %v", ok, err)
	}
	if again, err := s.CancelSweep(ctx, rec.ID); again || err != nil {
		t.Fatalf("second CancelSweep: %v %v; want false", again, err)
	}
	if st, err := s.RecordTrials(ctx, rec.ID, map[int]string{2: "j2"}, 3); err != nil || st != flows.SweepCancelled {
		t.Fatalf("RecordTrials after the cancel = %q, %v; want cancelled", st, err)
	}
	got, err := s.GetSweep(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != flows.SweepCancelled || got.Cursor != 2 || len(got.Trials) != 3 || got.Trials[2] != "j2" ||
		!got.Stopped[1] || len(got.Stopped) != 1 {
		t.Fatalf("cancelled sweep %+v: want cursor 2, trials 0..2, trial 1 stopped", got)
	}
	if active, err := s.ActiveSweeps(ctx); err != nil || !slices.Equal(active, []string{rec.ID}) {
		t.Fatalf("ActiveSweeps = %v, %v", active, err)
	}
	if ended, err := s.FinishSweep(ctx, rec.ID, flows.SweepCompleted); !ended || err != nil {
		t.Fatalf("FinishSweep: %v %v", ended, err)
	}
	if again, _ := s.FinishSweep(ctx, rec.ID, flows.SweepCompleted); again {
		t.Fatal("a sweep finished twice")
	}
	got, _ = s.GetSweep(ctx, rec.ID)
	if got.State != flows.SweepCancelled || got.FinishedAt.IsZero() {
		t.Fatalf("finished sweep %+v: want still cancelled, with its end time", got)
	}
	if active, _ := s.ActiveSweeps(ctx); len(active) != 0 {
		t.Fatalf("a finished sweep is still active: %v", active)
	}
	if list, err := s.ListSweeps(ctx, 0); err != nil || !slices.Equal(list, []string{rec.ID}) {
		t.Fatalf("ListSweeps = %v, %v", list, err)
	}
	if _, err := s.RecordTrials(ctx, "nope", nil, 0); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("RecordTrials of an unknown sweep: %v", err)
	}
}
