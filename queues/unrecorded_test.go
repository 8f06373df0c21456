package queues_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/gangs"
)

// claimedBy registers w and returns a job it has just claimed, at its
// first attempt.
func claimedBy(t *testing.T, s *queues.Store, w queues.WorkerInfo) jobs.Job {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Register(ctx, w); err != nil {
		t.Fatal(err)
	}
	sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	j, ok, err := s.ClaimAs(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, w.ID, w.Incarnation)
	if !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	return j
}

// TestRefinishRecordsALostEndAsItEnded: the record still says running
// after its worker ended the attempt (Redis lost the end). The beat names
// the attempt, Refinish records the end at the time it happened, and the
// beat names nothing after.
func TestRefinishRecordsALostEndAsItEnded(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	w := queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 2, Incarnation: "aaaa"}
	j := claimedBy(t, s, w)
	c.Add(3 * time.Second)
	ended := c.Now().Truncate(time.Millisecond)
	// Half the grace after the end: the worker no longer reports the
	// attempt, but a claim this recent could still be in flight.
	c.Add(5 * time.Second)
	if b, err := s.Heartbeat(ctx, w, nil); err != nil || len(b.Unrecorded) != 0 {
		t.Fatalf("named within the grace: %+v %v", b.Unrecorded, err)
	}
	c.Add(time.Minute)
	b, err := s.Heartbeat(ctx, w, nil)
	want := []queues.Delivery{{JobID: j.ID, Attempt: 1}}
	if err != nil || !slices.Equal(b.Unrecorded, want) || len(b.Lost) != 0 {
		t.Fatalf("beat: unrecorded %+v lost %v (%v), want %+v", b.Unrecorded, b.Lost, err, want)
	}
	code := 0
	e := queues.Ended{JobID: j.ID, Attempt: 1, Worker: "w1", Member: -1, State: jobs.StateSucceeded, ExitCode: &code, At: ended}
	for range 2 { // repeatable, as Finish is
		if ok, err := s.Refinish(ctx, e); !ok || err != nil {
			t.Fatalf("Refinish = %v, %v", ok, err)
		}
	}
	got, _ := s.Get(ctx, j.ID)
	if got.State != jobs.StateSucceeded || !got.FinishedAt.Equal(ended) || got.Attempt != 1 {
		t.Fatalf("record: %s attempt %d finished %s, want succeeded at attempt 1, finished %s", got.State, got.Attempt, got.FinishedAt, ended)
	}
	us, _ := usageIn(ctx, s, time.Time{}, c.Now().Add(time.Hour))
	if len(us) != 1 || !us[0].End.Equal(ended) || us[0].Outcome != "succeeded" {
		t.Fatalf("usage %+v, want one succeeded attempt ending %s", us, ended)
	}
	// Its usage entry is stamped a minute back, behind a reader of
	// changes: the departure is noted at the time of the repair.
	if at, err := s.Redis().ZScore(ctx, s.Namespace().Departed(), j.ID).Result(); err != nil || int64(at) != c.Now().UnixMilli() {
		t.Fatalf("departure noted at %v (%v), want %d", at, err, c.Now().UnixMilli())
	}
	if b, _ := s.Heartbeat(ctx, w, nil); len(b.Unrecorded) != 0 {
		t.Fatalf("named again once recorded: %+v", b.Unrecorded)
	}
	// An end for an attempt the record does not give the worker writes
	// nothing.
	e.Attempt, e.State = 2, jobs.StateFailed
	if ok, _ := s.Refinish(ctx, e); ok {
		t.Fatal("Refinish recorded the end of an attempt that never ran")
	}
	if got, _ := s.Get(ctx, j.ID); got.State != jobs.StateSucceeded {
		t.Fatalf("the job is %s", got.State)
	}
}

// TestUnrecordedGangMember: each worker of a gang names the attempt when
// it stops reporting it. A member's end recorded again is the member's
// only. A member that ended counts as run nowhere: once the other
// member's worker says it runs member 0 no more and ended nothing, the
// gang is requeued.
func TestUnrecordedGangMember(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	id, ds := placedGang(t, s)
	j := startGang(t, s, id, ds)
	c.Add(time.Minute)
	run := []queues.Delivery{{JobID: id, Attempt: j.Attempt}}
	w0, w1 := queues.WorkerInfo{ID: "w0"}, queues.WorkerInfo{ID: "w1"}
	if b, _ := s.Heartbeat(ctx, w0, run); len(b.Unrecorded) != 0 {
		t.Fatalf("w0 reports the gang, and it was named: %+v", b.Unrecorded)
	}
	// Member 1, on w1, is the record's only through the gang: member 0's
	// worker is the record's worker.
	named := []queues.Delivery{{JobID: id, Attempt: j.Attempt, Members: 2}}
	if b, _ := s.Heartbeat(ctx, w1, nil); !slices.Equal(b.Unrecorded, named) {
		t.Fatalf("w1's beat named %+v, want %+v", b.Unrecorded, named)
	}
	ok, err := s.Refinish(ctx, queues.Ended{JobID: id, Attempt: j.Attempt, Worker: "w1", Member: 1, State: jobs.StateSucceeded, At: c.Now()})
	if !ok || err != nil {
		t.Fatalf("member 1's end again: %v %v", ok, err)
	}
	if got, _ := s.Get(ctx, id); got.State != jobs.StateRunning {
		t.Fatalf("the gang is %s with member 0 still running", got.State)
	}
	if b, _ := s.Heartbeat(ctx, w1, nil); len(b.Unrecorded) != 0 {
		t.Fatalf("w1 still names the gang after its member's end: %+v", b.Unrecorded)
	}
	b, _ := s.Heartbeat(ctx, w0, nil)
	if !slices.Equal(b.Unrecorded, named) {
		t.Fatalf("w0's beat named %+v, want %+v", b.Unrecorded, named)
	}
	rs, err := s.RequeueUnrecorded(ctx, w0, b.Unrecorded)
	if err != nil || len(rs) != 1 || rs[0].Attempt != j.Attempt+1 {
		t.Fatalf("with member 1 ended and member 0 run nowhere, requeued %+v (%v), want attempt %d", rs, err, j.Attempt+1)
	}
}

// gangOnRecord is a gang of two running on w0 and w1 (incarnations i0,
// i1) whose workers run neither member: the record of its move or end
// was lost. Both workers beat, so both are registered.
func gangOnRecord(t *testing.T) (*queues.Store, *clock, jobs.Job, [2]queues.WorkerInfo, []queues.Delivery) {
	t.Helper()
	s, c := newStore(t)
	ctx := context.Background()
	ws := [2]queues.WorkerInfo{{ID: "w0", Slots: 2, Incarnation: "i0"}, {ID: "w1", Slots: 2, Incarnation: "i1"}}
	for _, w := range ws {
		if _, err := s.Register(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	id, ds := placedGang(t, s)
	j := startGang(t, s, id, ds)
	c.Add(time.Minute)
	return s, c, j, ws, ds
}

// saysNone is a beat of w that reports nothing, and what the worker does
// with the gang it names: RequeueUnrecorded.
func saysNone(t *testing.T, s *queues.Store, w queues.WorkerInfo, j jobs.Job) []queues.Recovered {
	t.Helper()
	ctx := context.Background()
	b, err := s.Heartbeat(ctx, w, nil)
	named := []queues.Delivery{{JobID: j.ID, Attempt: j.Attempt, Members: 2}}
	if err != nil || !slices.Equal(b.Unrecorded, named) {
		t.Fatalf("%s's beat named %+v (%v), want %+v", w.ID, b.Unrecorded, err, named)
	}
	rs, err := s.RequeueUnrecorded(ctx, w, b.Unrecorded)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// stillRunning fails unless the gang is running at its attempt.
func stillRunning(t *testing.T, s *queues.Store, j jobs.Job, when string) {
	t.Helper()
	if got, _ := s.Get(context.Background(), j.ID); got.State != jobs.StateRunning || got.Attempt != j.Attempt {
		t.Fatalf("%s: the gang is %s at attempt %d, want running at %d", when, got.State, got.Attempt, j.Attempt)
	}
}

// TestAGangIsRequeuedOnlyOnceEveryMembersWorkerRunsNone: one member's
// worker saying it runs no member does not move the gang (the other may be
// checkpointing it); its word expires; a claim retried since voids it; a
// member whose worker left counts as run nowhere. Once every member's
// worker has said so, the gang is requeued whole, as one new attempt.
func TestAGangIsRequeuedOnlyOnceEveryMembersWorkerRunsNone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("both say so", func(t *testing.T) {
		t.Parallel()
		s, c, j, ws, _ := gangOnRecord(t)
		if rs := saysNone(t, s, ws[1], j); len(rs) != 0 {
			t.Fatalf("requeued on w1's word alone: %+v", rs)
		}
		// w0 still runs member 0 (it is checkpointing the gang).
		if b, _ := s.Heartbeat(ctx, ws[0], []queues.Delivery{{JobID: j.ID, Attempt: j.Attempt}}); len(b.Unrecorded) != 0 {
			t.Fatalf("w0 reports member 0 and the beat named %+v", b.Unrecorded)
		}
		stillRunning(t, s, j, "with member 0 running")
		// w1's word is too old by the time w0 says the same.
		c.Add(31 * time.Second)
		if rs := saysNone(t, s, ws[0], j); len(rs) != 0 {
			t.Fatalf("requeued on w0's word and w1's of 31 s ago: %+v", rs)
		}
		stillRunning(t, s, j, "after w0's word")
		rs := saysNone(t, s, ws[1], j)
		if len(rs) != 1 || rs[0].JobID != j.ID || rs[0].Attempt != j.Attempt+1 {
			t.Fatalf("requeued %+v, want the gang at attempt %d", rs, j.Attempt+1)
		}
		got, _ := s.Get(ctx, j.ID)
		if got.State != jobs.StateQueued || got.Attempt != j.Attempt+1 || !strings.Contains(got.LastError, "ran no member of it") ||
			got.Requeues != 1 || got.Retries != 0 {
			t.Fatalf("after the requeue: %s at attempt %d, requeues %d retries %d, error %q", got.State, got.Attempt, got.Requeues,
				got.Retries, got.LastError)
		}
		for _, w := range ws {
			if n, _ := s.Redis().SCard(ctx, s.Namespace().WorkerJobs(w.ID)).Result(); n != 0 {
				t.Errorf("%s still lists the gang", w.ID)
			}
		}
		us, _ := usageIn(ctx, s, time.Time{}, c.Now().Add(time.Hour))
		if len(us) != 1 || us[0].Outcome != "lost" || us[0].Slots != 4 {
			t.Fatalf("usage %+v, want the gang's attempt lost, once, on 4 slots", us)
		}
		if rs := saysNoneAgain(t, s, ws[0]); len(rs) != 0 {
			t.Fatalf("requeued again: %+v", rs)
		}
	})
	t.Run("a claim retried since", func(t *testing.T) {
		t.Parallel()
		s, c, j, ws, ds := gangOnRecord(t)
		saysNone(t, s, ws[1], j)
		c.Add(time.Second)
		// w0 takes member 0 back (its claim's reply was lost): it runs it
		// from now, and w1's word from before does not count.
		if _, ok, err := gangs.New(s).ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1"); !ok || err != nil {
			t.Fatalf("the retried claim: %v %v", ok, err)
		}
		if b, _ := s.Heartbeat(ctx, ws[0], nil); len(b.Unrecorded) != 0 {
			t.Fatalf("named a member claimed again just now: %+v", b.Unrecorded)
		}
		c.Add(11 * time.Second)
		if rs := saysNone(t, s, ws[0], j); len(rs) != 0 {
			t.Fatalf("requeued on w0's word and w1's from before the retried claim: %+v", rs)
		}
		stillRunning(t, s, j, "after the retried claim")
		if rs := saysNone(t, s, ws[1], j); len(rs) != 1 {
			t.Fatalf("both said so since the retried claim, and %+v was requeued", rs)
		}
	})
	t.Run("a worker that left", func(t *testing.T) {
		t.Parallel()
		s, _, j, ws, _ := gangOnRecord(t)
		// w1 drained and handed its gang to member 0 (a preemption
		// pending), then left: Leave leaves the gang to member 0. Member
		// 0's requeue was lost.
		if ok, err := s.RequestPreempt(ctx, j.ID, j.Attempt, queues.QueueCore, "member 1's worker w1 draining"); !ok || err != nil {
			t.Fatalf("RequestPreempt = %v, %v", ok, err)
		}
		if rs, err := s.Leave(ctx, "w1", "i1"); err != nil || len(rs) != 0 {
			t.Fatalf("Leave = %+v, %v", rs, err)
		}
		stillRunning(t, s, j, "after w1 left")
		if rs := saysNone(t, s, ws[0], j); len(rs) != 1 || rs[0].Attempt != j.Attempt+1 {
			t.Fatalf("with w1 gone, w0's word requeued %+v", rs)
		}
	})
}

// saysNoneAgain is a beat of w after the requeue: it names nothing.
func saysNoneAgain(t *testing.T, s *queues.Store, w queues.WorkerInfo) []queues.Delivery {
	t.Helper()
	b, err := s.Heartbeat(context.Background(), w, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b.Unrecorded
}

// TestAClaimRetriedIsNotUnrecorded: a claim whose reply was lost is
// retried, and answered with the attempt already claimed; from then the
// process holds it, however long ago the first claim was. Until the grace
// has passed since the retry, no beat names it and it is not requeued.
func TestAClaimRetriedIsNotUnrecorded(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	w := queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "aaaa"}
	j := claimedBy(t, s, w)
	d := queues.Delivery{JobID: j.ID, Attempt: 1}
	c.Add(time.Minute)
	if _, ok, err := s.ClaimAs(ctx, d, "w1", "aaaa"); !ok || err != nil {
		t.Fatalf("the claim's retry: %v %v", ok, err)
	}
	if b, _ := s.Heartbeat(ctx, w, nil); len(b.Unrecorded) != 0 {
		t.Fatalf("named an attempt claimed again just now: %+v", b.Unrecorded)
	}
	if rs, _ := s.RequeueUnrecorded(ctx, w, []queues.Delivery{d}); len(rs) != 0 {
		t.Fatalf("requeued an attempt claimed again just now: %+v", rs)
	}
	c.Add(time.Minute)
	if b, _ := s.Heartbeat(ctx, w, nil); !slices.Equal(b.Unrecorded, []queues.Delivery{d}) {
		t.Fatalf("a minute after the retry, the beat named %+v", b.Unrecorded)
	}
}

// TestRequeueUnrecordedOfATakenOverIDRequeuesNothing: a process whose ID
// a newer incarnation took over since its beat does not know the new
// process's attempts, and must not requeue them.
func TestRequeueUnrecordedOfATakenOverIDRequeuesNothing(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	old := queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "aaaa"}
	s.Register(ctx, old)
	if _, err := s.Register(ctx, queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "bbbb"}); err != nil {
		t.Fatal(err)
	}
	sub, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	d := queues.Delivery{JobID: sub.Job.ID, Attempt: 1}
	if _, ok, err := s.ClaimAs(ctx, d, "w1", "bbbb"); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	c.Add(time.Minute)
	if rs, err := s.RequeueUnrecorded(ctx, old, []queues.Delivery{d}); err != nil || len(rs) != 0 {
		t.Fatalf("the old incarnation requeued %+v (%v)", rs, err)
	}
	if got, _ := s.Get(ctx, d.JobID); got.State != jobs.StateRunning || got.Attempt != 1 {
		t.Fatalf("the new process's job: %s attempt %d", got.State, got.Attempt)
	}
}
