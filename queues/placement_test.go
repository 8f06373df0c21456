package queues_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

func sizedSpec(slots int) jobs.Spec {
	sp := spec("")
	sp.Size = jobs.Size{Slots: slots}
	return sp
}

// placedTasks lists the deliveries in worker's own queue.
func placedTasks(t *testing.T, s *queues.Store, worker string) []queues.Delivery {
	t.Helper()
	insp := asynq.NewInspectorFromRedisClient(s.Redis())
	infos, err := insp.ListPendingTasks(s.Namespace().AsynqQueue(queues.PlaceQueue(worker)))
	if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
		t.Fatalf("list %s: %v", worker, err)
	}
	var out []queues.Delivery
	for _, ti := range infos {
		d, err := queues.DecodeDelivery(ti.Payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// A sized job waits with no task in any queue a worker shares; Place writes
// one delivery, carrying its slots, into the worker's own queue.
func TestSizedJobWaitsForPlacement(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, err := s.Submit(ctx, sizedSpec(4), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if p := pending(t, s, queues.QueueCore); p != 0 {
		t.Fatalf("core holds %d tasks for an unplaced four-slot job, want 0", p)
	}
	if got, _ := s.Get(ctx, sub.Job.ID); got.Placed != nil || got.State != jobs.StateQueued {
		t.Fatalf("after submit: placed %v state %s", got.Placed, got.State)
	}
	n, err := s.Place(ctx, sub.Job.ID, 1, []string{"w1"})
	if err != nil || n != 2 {
		t.Fatalf("Place = %d, %v; want attempt 2", n, err)
	}
	ds := placedTasks(t, s, "w1")
	if len(ds) != 1 || ds[0].JobID != sub.Job.ID || ds[0].Attempt != 2 || ds[0].Slots != 4 {
		t.Fatalf("w1's queue holds %+v, want attempt 2 of 4 slots", ds)
	}
	got, _ := s.Get(ctx, sub.Job.ID)
	if len(got.Placed) != 1 || got.Placed[0] != "w1" || got.Queue != "core" || !got.QueuedAt.Equal(sub.Job.QueuedAt) {
		t.Errorf("after place: placed %v queue %s queued %v", got.Placed, got.Queue, got.QueuedAt)
	}
	// Placing again, or with the old attempt, changes nothing.
	if n, err := s.Place(ctx, sub.Job.ID, 2, []string{"w2"}); n != 0 || err != nil {
		t.Errorf("a second placement = %d, %v; want 0", n, err)
	}
	if n, _ := s.Place(ctx, sub.Job.ID, 1, []string{"w2"}); n != 0 {
		t.Errorf("a placement with the old attempt = %d", n)
	}
	if len(placedTasks(t, s, "w2")) != 0 {
		t.Error("a refused placement wrote a delivery")
	}
	// The placed worker claims it like any delivery.
	j, ok, err := s.Claim(ctx, ds[0], "w1")
	if err != nil || !ok || j.State != jobs.StateRunning {
		t.Fatalf("claim of the placed delivery: %v %v %s", ok, err, j.State)
	}
}

// Taking a placement back is a move: the new attempt is unplaced, writes
// no task, and the held delivery of the placed attempt is stale.
func TestMoveUnplaces(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, sizedSpec(2), queues.QueueBurst)
	if _, err := s.Place(ctx, sub.Job.ID, 1, []string{"w1"}); err != nil {
		t.Fatal(err)
	}
	n, err := s.Move(ctx, sub.Job.ID, 2, queues.QueueBurst, "placed worker gone")
	if err != nil || n != 3 {
		t.Fatalf("Move = %d, %v", n, err)
	}
	got, _ := s.Get(ctx, sub.Job.ID)
	if got.Placed != nil || pending(t, s, queues.QueueBurst) != 0 {
		t.Errorf("after the move: placed %v, burst holds %d", got.Placed, pending(t, s, queues.QueueBurst))
	}
	if _, ok, _ := s.Claim(ctx, queues.Delivery{JobID: got.ID, Attempt: 2, Slots: 2}, "w1"); ok {
		t.Error("the placed attempt was claimed after the placement was taken back")
	}
	if st, a, err := s.AttemptState(ctx, got.ID); err != nil || st != jobs.StateQueued || a != 3 {
		t.Errorf("AttemptState = %s %d %v", st, a, err)
	}
	if _, _, err := s.AttemptState(ctx, "0000000000000000000000000000"); !errors.Is(err, jobs.ErrNotFound) {
		t.Errorf("AttemptState of no job: %v", err)
	}
	// A one-slot job is not placed.
	one, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	if _, err := s.Place(ctx, one.Job.ID, 1, []string{"w1"}); !errors.Is(err, queues.ErrNotPlaceable) {
		t.Errorf("placing a one-slot job: %v", err)
	}
}

// A gang's placement writes one delivery per member, each in its worker's
// queue, and a count that does not match the members is refused.
func TestPlaceGangMembers(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sp := spec("")
	sp.Size = jobs.Size{Slots: 2, Replicas: 2}
	sub, _ := s.Submit(ctx, sp, queues.QueueCore)
	if _, err := s.Place(ctx, sub.Job.ID, 1, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	a, b := placedTasks(t, s, "a"), placedTasks(t, s, "b")
	if len(a) != 1 || len(b) != 1 || a[0].Member != 0 || b[0].Member != 1 || a[0].Attempt != 2 || b[0].Slots != 2 {
		t.Errorf("members: a %+v b %+v", a, b)
	}
	other, _ := s.Submit(ctx, sp, queues.QueueCore)
	if _, err := s.Place(ctx, other.Job.ID, 1, []string{"a"}); err == nil {
		t.Error("one worker for two members was accepted")
	}
	if got, _ := s.Get(ctx, other.Job.ID); got.Attempt != 1 || got.Placed != nil {
		t.Errorf("a refused placement changed the record: attempt %d placed %v", got.Attempt, got.Placed)
	}
}

// A sized job's attempts are billed for its slots: the usage record of a
// four-slot job says four, running or ended; a one-slot job's says one.
func TestUsageCountsASizedJobsSlots(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 4, StartedAt: c.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	big, _ := s.Submit(ctx, sizedSpec(4), queues.QueueCore)
	one, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	n, err := s.Place(ctx, big.Job.ID, 1, []string{"w1"})
	if err != nil {
		t.Fatal(err)
	}
	jb, ok, err := s.Claim(ctx, queues.Delivery{JobID: big.Job.ID, Attempt: n, Slots: 4}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	jo, ok, _ := s.Claim(ctx, queues.Delivery{JobID: one.Job.ID, Attempt: 1}, "w1")
	if !ok {
		t.Fatal("one-slot claim")
	}
	if u := usage.RunningUsage(jb); u.Slots != 4 {
		t.Errorf("running usage of the four-slot job: %d slots", u.Slots)
	}
	c.Add(time.Hour)
	for _, j := range []jobs.Job{jb, jo} {
		if _, err := s.Finish(ctx, j, "w1", jobs.StateSucceeded, nil, ""); err != nil {
			t.Fatal(err)
		}
	}
	us, err := usageIn(ctx, s, c.Now().Add(-2*time.Hour), c.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, u := range us {
		got[u.JobID] = u.Slots
	}
	if got[big.Job.ID] != 4 || got[one.Job.ID] != 1 {
		t.Errorf("usage slots %v: want 4 for the sized job, 1 for the other", got)
	}
}

// A reservation moves as a new attempt: the job is placed on the new
// worker, with the time of the move, and the delivery held on the old
// worker is stale. An unplaced job has no reservation to move.
func TestMovePlacement(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	sub, _ := s.Submit(ctx, sizedSpec(4), queues.QueueCore)
	if n, _ := s.MovePlacement(ctx, sub.Job.ID, 1, []string{"w2"}); n != 0 {
		t.Fatalf("moving the placement of an unplaced job = %d, want 0", n)
	}
	if _, err := s.Place(ctx, sub.Job.ID, 1, []string{"w1"}); err != nil {
		t.Fatal(err)
	}
	placed, _ := s.Get(ctx, sub.Job.ID)
	if !placed.PlacedAt.Equal(c.Now().Truncate(time.Millisecond)) {
		t.Fatalf("placed at %v, want %v", placed.PlacedAt, c.Now())
	}
	c.Add(time.Minute)
	n, err := s.MovePlacement(ctx, sub.Job.ID, 2, []string{"w2"})
	if err != nil || n != 3 {
		t.Fatalf("MovePlacement = %d, %v; want attempt 3", n, err)
	}
	got, _ := s.Get(ctx, sub.Job.ID)
	if len(got.Placed) != 1 || got.Placed[0] != "w2" || !got.PlacedAt.Equal(c.Now().Truncate(time.Millisecond)) {
		t.Fatalf("after the move: placed %v at %v", got.Placed, got.PlacedAt)
	}
	if ds := placedTasks(t, s, "w2"); len(ds) != 1 || ds[0].Attempt != 3 {
		t.Fatalf("w2's queue holds %+v, want attempt 3", ds)
	}
	old := placedTasks(t, s, "w1")
	if len(old) != 1 {
		t.Fatalf("w1's queue holds %+v", old)
	}
	if _, ok, _ := s.Claim(ctx, old[0], "w1"); ok {
		t.Fatal("the delivery of the moved reservation was claimed")
	}
	if n, _ := s.MovePlacement(ctx, sub.Job.ID, 2, []string{"w1"}); n != 0 {
		t.Fatalf("a move with the old attempt = %d, want 0", n)
	}
}
