package queues_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// admitFromHeld submits n core jobs to held a millisecond apart and admits
// each to core as rule 9 does, returning their IDs in admission order.
func admitFromHeld(t *testing.T, s *queues.Store, c *clock, n int) []string {
	t.Helper()
	ids := fillApart(t, s, c, queues.QueueHeld, n)
	for _, id := range ids {
		if got, err := s.AdmitHeld(context.Background(), id, 1, "in share"); err != nil || got != 2 {
			t.Fatalf("admit %s: %d %v", id, got, err)
		}
	}
	return ids
}

// TestHeldAdmittedJobsGoBackToHeld: under team shares, core jobs that rule
// 9 admitted from held and that are sent back for any reason but a
// reclaim (worker lost, restarted, left, unrecorded, drained) wait in held
// again, not core, readmitted, so they are the first held work taken
// (admitted) again, ahead of the held backlog, in admission order.
func TestHeldAdmittedJobsGoBackToHeld(t *testing.T) {
	t.Parallel()
	for _, tc := range readmitCases() {
		if tc.to != queues.QueueCore {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, c := newStore(t)
			ctx := context.Background()
			w := queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 3, Incarnation: "aaaa"}
			if _, err := s.Register(ctx, w); err != nil {
				t.Fatal(err)
			}
			first := admitFromHeld(t, s, c, 3)
			later := fillApart(t, s, c, queues.QueueHeld, 2)
			c.Add(time.Millisecond)
			later = append(later, fill(t, s, queues.QueueHeld, 50)...)
			me := queues.Claimant{Worker: w.ID, Incarnation: w.Incarnation, Pool: w.Pool}
			took, err := take(ctx, s, []queues.Queue{queues.QueueCore}, me, 3)
			if err != nil || !slices.Equal(jobIDs(took.Jobs), first) {
				t.Fatalf("first take: %v %v; want %v", jobIDs(took.Jobs), err, first)
			}
			running := []jobs.Job{took.Jobs[2], took.Jobs[0], took.Jobs[1]}
			tc.send(t, s, c, w, running)
			for _, id := range first {
				j, err := s.Get(ctx, id)
				if err != nil || queues.Queue(j.Queue) != queues.QueueHeld || !j.Readmitted || j.State != jobs.StateQueued {
					t.Fatalf("after %s, %s is %+v %v; want queued in held, readmitted", tc.name, id, j, err)
				}
			}
			other := queues.Claimant{Worker: "w2", Incarnation: "cccc", Pool: "fixed"}
			if got := takeIDs(t, s, []queues.Queue{queues.QueueCore}, other, 1); len(got) != 0 {
				t.Fatalf("after %s core holds %v; want nothing", tc.name, got)
			}
			if got := takeIDs(t, s, []queues.Queue{queues.QueueHeld}, other, 5); !slices.Equal(got, append(slices.Clone(first), later[:2]...)) {
				t.Fatalf("after %s held serves %v; want %v then the backlog %v", tc.name, got, first, later[:2])
			}
		})
	}
}

// TestHeldAdmissionEndsWithOtherMoves: the mark is only rule 9's. A core
// job moved out of held by a plain Move (shares turned off) goes back to
// core when its worker is lost, as without shares; a job admitted from
// held whose delivery was never claimed goes back to held.
func TestHeldAdmissionEndsWithOtherMoves(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	w := queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 1, Incarnation: "aaaa"}
	if _, err := s.Register(ctx, w); err != nil {
		t.Fatal(err)
	}
	id := admitFromHeld(t, s, c, 1)[0]
	if n, err := s.Move(ctx, id, 2, queues.QueueHeld, "back"); err != nil || n != 3 {
		t.Fatalf("move to held: %d %v", n, err)
	}
	if n, err := s.Move(ctx, id, 3, queues.QueueCore, "shares are off"); err != nil || n != 4 {
		t.Fatalf("move to core: %d %v", n, err)
	}
	me := queues.Claimant{Worker: w.ID, Incarnation: w.Incarnation, Pool: w.Pool}
	if got := takeIDs(t, s, []queues.Queue{queues.QueueCore}, me, 1); !slices.Equal(got, []string{id}) {
		t.Fatalf("take: %v; want %s", got, id)
	}
	c.Add(10 * time.Second)
	if rs, err := s.RecoverDeadWorkers(ctx, 4*time.Second); err != nil || len(rs) != 1 {
		t.Fatalf("recovery: %+v %v", rs, err)
	}
	if j, err := s.Get(ctx, id); err != nil || queues.Queue(j.Queue) != queues.QueueCore {
		t.Fatalf("after a plain move and a lost worker: %+v %v; want in core", j, err)
	}

	other := admitFromHeld(t, s, c, 1)[0]
	if n, err := s.Readmit(ctx, other, 2, queues.QueueCore, "never claimed"); err != nil || n != 3 {
		t.Fatalf("readmit: %d %v", n, err)
	}
	if j, err := s.Get(ctx, other); err != nil || queues.Queue(j.Queue) != queues.QueueHeld || !j.Readmitted {
		t.Fatalf("an admitted delivery never claimed: %+v %v; want readmitted in held", j, err)
	}
}

// TestHeldAdmittedRetryWaitsInHeld: a core job rule 9 admitted that fails
// and is retried goes back to held, not core, as new work (not
// readmitted) with its back-off in the record: in core it would start
// when its back-off ends without rule 9 asking whether its team has room.
func TestHeldAdmittedRetryWaitsInHeld(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	w := queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 1, Incarnation: "aaaa"}
	if _, err := s.Register(ctx, w); err != nil {
		t.Fatal(err)
	}
	id := admitFromHeld(t, s, c, 1)[0]
	me := queues.Claimant{Worker: w.ID, Incarnation: w.Incarnation, Pool: w.Pool}
	took, err := take(ctx, s, []queues.Queue{queues.QueueCore}, me, 1)
	if err != nil || len(took.Jobs) != 1 {
		t.Fatalf("take: %+v %v", took, err)
	}
	backOff := c.Now().Add(time.Minute)
	r, err := s.Requeue(ctx, took.Jobs[0], w.ID, queues.Requeue{Retry: true, NotBefore: backOff, Reason: "exit 1"})
	if err != nil || r.Queue != queues.QueueHeld {
		t.Fatalf("retry: %+v %v; want the next attempt in held", r, err)
	}
	j, err := s.Get(ctx, id)
	if err != nil || queues.Queue(j.Queue) != queues.QueueHeld || j.Readmitted || j.NotBefore.Sub(backOff).Abs() >= time.Millisecond {
		t.Fatalf("after a retry: %+v %v; want in held, not readmitted, not before %v", j, err, backOff)
	}
}
