package gangs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
)

// placedGang submits a retryable gang of two 2-slot members and places
// member 0 on w0, member 1 on w1; it returns the job ID and the deliveries.
func placedGang(t testing.TB, s *store) (string, []queues.Delivery) {
	t.Helper()
	ctx := context.Background()
	sp := spec("")
	sp.Size = jobs.Size{Slots: 2, Replicas: 2}
	sp.Retryable = true
	sp.MaxRetries = 3
	sub, err := s.Submit(ctx, sp, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Place(ctx, sub.Job.ID, 1, []string{"w0", "w1"})
	if err != nil || n != 2 {
		t.Fatalf("Place = %d, %v", n, err)
	}
	d0, d1 := placedTasks(t, s, "w0"), placedTasks(t, s, "w1")
	if len(d0) != 1 || len(d1) != 1 || d0[0].Member != 0 || d1[0].Member != 1 || d0[0].Members != 2 || d1[0].Members != 2 {
		t.Fatalf("deliveries %+v %+v, want member 0 of 2 on w0 and member 1 on w1", d0, d1)
	}
	return sub.Job.ID, []queues.Delivery{d0[0], d1[0]}
}

// startGang claims both members (w0 with coordinator "h0:1") and checks
// the gang runs only after the second claim.
func startGang(t *testing.T, s *store, id string, ds []queues.Delivery) jobs.Job {
	t.Helper()
	ctx := context.Background()
	j, ok, err := s.ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1")
	if err != nil || !ok || j.State != jobs.StateQueued {
		t.Fatalf("member 0's claim = %v %v state %s; want claimed, still queued", ok, err, j.State)
	}
	if g, _ := s.Barrier(ctx, id, ds[0].Attempt); g.Started || g.Moved {
		t.Fatalf("after one claim of two: %+v", g)
	}
	j, ok, err = s.ClaimMember(ctx, ds[1], 2, "w1", "i1", "")
	if err != nil || !ok || j.State != jobs.StateRunning || j.Worker != "w0" {
		t.Fatalf("member 1's claim = %v %v state %s worker %s; want running under w0", ok, err, j.State, j.Worker)
	}
	if g, _ := s.Barrier(ctx, id, ds[0].Attempt); !g.Started || g.Coordinator != "h0:1" {
		t.Fatalf("after both claims: %+v", g)
	}
	return j
}

func TestGangMemberClaims(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	_, ds := placedGang(t, s)
	// A plain claim never starts a gang's member alone, nor does a worker
	// the placement does not name.
	if _, ok, _ := s.ClaimMember(ctx, ds[1], 2, "w0", "i0", ""); ok {
		t.Fatal("w0 claimed the member placed on w1")
	}
	j, ok, _ := s.ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1")
	if !ok || j.State != jobs.StateQueued {
		t.Fatal("member 0's claim")
	}
	if _, ok, _ := s.Claim(ctx, ds[0], "w0"); ok {
		t.Fatal("a plain claim of a gang's delivery succeeded")
	}
	// A lost reply: the same incarnation's retry gets the record again.
	if j, ok, err := s.ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1"); !ok || err != nil || j.State != jobs.StateQueued {
		t.Fatalf("replayed member claim = %v %v", ok, err)
	}
	j, ok, _ = s.ClaimMember(ctx, ds[1], 2, "w1", "i1", "")
	if !ok || j.State != jobs.StateRunning || j.Worker != "w0" {
		t.Fatalf("the second claim left the gang %s on %q", j.State, j.Worker)
	}
	// Replays after the start still answer the record, running.
	for i, w := range []string{"w0", "w1"} {
		if j, ok, _ := s.ClaimMember(ctx, ds[i], 2, w, "i"+w[1:], ""); !ok || j.State != jobs.StateRunning {
			t.Fatalf("replay of member %d after the start: %v %s", i, ok, j.State)
		}
	}
	for _, w := range []string{"w0", "w1"} {
		if n, _ := s.Redis().SCard(ctx, s.Namespace().WorkerJobs(w)).Result(); n != 1 {
			t.Errorf("%s's running set holds %d jobs, want the gang", w, n)
		}
	}
}

func TestGangClaimOfMovedAttemptIsStale(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	id, ds := placedGang(t, s)
	if _, ok, _ := s.ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1"); !ok {
		t.Fatal("member 0's claim")
	}
	// Member 0 gives up waiting: the gang moves on, unplaced.
	n, err := s.Abandon(ctx, id, ds[0].Attempt, "w0", "the gang did not assemble")
	if err != nil || n != ds[0].Attempt+1 {
		t.Fatalf("AbandonMember = %d, %v", n, err)
	}
	if n, _ := s.Abandon(ctx, id, ds[0].Attempt, "w0", "again"); n != 0 {
		t.Fatalf("a replayed abandon moved the gang again to %d", n)
	}
	if _, ok, _ := s.ClaimMember(ctx, ds[1], 2, "w1", "i1", ""); ok {
		t.Fatal("member 1 claimed an attempt that moved on")
	}
	if g, _ := s.Barrier(ctx, id, ds[0].Attempt); !g.Moved {
		t.Fatalf("GangStarted of the old attempt = %+v, want moved", g)
	}
	j, _ := s.Get(ctx, id)
	if j.State != jobs.StateQueued || j.Placed != nil {
		t.Fatalf("after the abandon: %s placed %v", j.State, j.Placed)
	}
	if n, _ := s.Redis().SCard(ctx, s.Namespace().WorkerJobs("w0")).Result(); n != 0 {
		t.Errorf("w0 still lists the gang it gave up")
	}
}

func TestGangFailureRequeuesOnce(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	id, ds := placedGang(t, s)
	j := startGang(t, s, id, ds)
	if ok, _ := s.Checkpoint(ctx, j, "w0", "ck-0"); !ok {
		t.Fatal("member 0's checkpoint was refused")
	}
	// Member 1 fails: the whole gang is one new attempt, one retry.
	moved, err := s.Requeue(ctx, j, "w1", queues.Requeue{Retry: true, Reason: "exited with code 1"})
	if err != nil || moved.Attempt != j.Attempt+1 {
		t.Fatalf("Requeue by member 1 = %+v, %v", moved, err)
	}
	// The new attempt is unplaced: no delivery of it on the old workers.
	for _, w := range []string{"w0", "w1"} {
		for _, d := range placedTasks(t, s, w) {
			if d.Attempt == moved.Attempt {
				t.Errorf("%s holds a delivery of the unplaced attempt %d", w, d.Attempt)
			}
		}
	}
	// Replay of the same requeue gets the same answer.
	if again, _ := s.Requeue(ctx, j, "w1", queues.Requeue{Retry: true, Reason: "exited with code 1"}); again != moved {
		t.Fatalf("replayed requeue = %+v, want %+v", again, moved)
	}
	// Member 0, stopped meanwhile, moves nothing more.
	if m, _ := s.Requeue(ctx, j, "w0", queues.Requeue{Retry: true, Reason: "killed"}); m.Attempt != 0 {
		t.Fatalf("the second member's requeue moved the gang again: %+v", m)
	}
	if end, _ := s.FinishMember(ctx, j, "w0", 0, jobs.StateFailed, nil, "x"); end != queues.MemberFenced {
		t.Fatalf("a finish of the moved attempt = %v", end)
	}
	got, _ := s.Get(ctx, id)
	if got.Retries != 1 || got.Attempt != j.Attempt+1 || got.State != jobs.StateQueued || got.Checkpoint != "ck-0" || got.Placed != nil {
		t.Fatalf("after the failure: retries %d attempt %d %s checkpoint %q placed %v", got.Retries, got.Attempt, got.State, got.Checkpoint, got.Placed)
	}
	for _, w := range []string{"w0", "w1"} {
		if n, _ := s.Redis().SCard(ctx, s.Namespace().WorkerJobs(w)).Result(); n != 0 {
			t.Errorf("%s still lists the requeued gang", w)
		}
	}
	// The heartbeat tells member 0's worker its attempt is over.
	b, _ := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w0"}, []queues.Delivery{{JobID: id, Attempt: j.Attempt}})
	if len(b.Lost) != 1 {
		t.Fatalf("w0's beat: lost %v", b.Lost)
	}
	us, _ := usageIn(ctx, s.Store, time.Time{}, time.Now().Add(time.Hour))
	if len(us) != 1 || us[0].Outcome != "retried" {
		t.Fatalf("usage %+v, want one retried attempt", us)
	}
}

func TestGangSucceedsWhenEveryMemberDid(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	id, ds := placedGang(t, s)
	j := startGang(t, s, id, ds)
	// Each member's beat sees its attempt as its own.
	for _, w := range []string{"w0", "w1"} {
		if b, _ := s.Heartbeat(ctx, queues.WorkerInfo{ID: w}, []queues.Delivery{{JobID: id, Attempt: j.Attempt}}); len(b.Lost) != 0 {
			t.Fatalf("%s's beat reports its member lost", w)
		}
	}
	code := 0
	if end, err := s.FinishMember(ctx, j, "w1", 1, jobs.StateSucceeded, &code, ""); end != queues.MemberDone || err != nil {
		t.Fatalf("member 1's success = %v, %v; want MemberDone", end, err)
	}
	if end, _ := s.FinishMember(ctx, j, "w1", 1, jobs.StateSucceeded, &code, ""); end != queues.MemberDone {
		t.Fatalf("replayed member success = %v", end)
	}
	if got, _ := s.Get(ctx, id); got.State != jobs.StateRunning {
		t.Fatalf("the gang is %s with one member still running", got.State)
	}
	if end, _ := s.FinishMember(ctx, j, "w0", 0, jobs.StateSucceeded, &code, ""); end != queues.JobEnded {
		t.Fatalf("the last member's success = %v, want JobEnded", end)
	}
	if end, _ := s.FinishMember(ctx, j, "w0", 0, jobs.StateSucceeded, &code, ""); end != queues.JobEnded {
		t.Fatalf("replayed last success = %v", end)
	}
	if got, _ := s.Get(ctx, id); got.State != jobs.StateSucceeded {
		t.Fatalf("the gang is %s", got.State)
	}
	us, _ := usageIn(ctx, s.Store, time.Time{}, time.Now().Add(time.Hour))
	if len(us) != 1 || us[0].Outcome != "succeeded" || us[0].Slots != 4 {
		t.Fatalf("usage %+v, want one succeeded attempt of the gang's 2x2 slots", us)
	}
	for _, w := range []string{"w0", "w1"} {
		if n, _ := s.Redis().SCard(ctx, s.Namespace().WorkerJobs(w)).Result(); n != 0 {
			t.Errorf("%s still lists the finished gang", w)
		}
	}
}

func TestGangRequeuedWhenOneMembersWorkerDies(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	id, ds := placedGang(t, s)
	j := startGang(t, s, id, ds)
	live := []queues.Delivery{{JobID: id, Attempt: j.Attempt}}
	s.Heartbeat(ctx, queues.WorkerInfo{ID: "w0"}, live)
	s.Heartbeat(ctx, queues.WorkerInfo{ID: "w1"}, live)
	c.Add(4 * time.Second)
	s.Heartbeat(ctx, queues.WorkerInfo{ID: "w0"}, live)
	c.Add(2 * time.Second)
	// w1, member 1's worker (not the record's), went silent.
	rec, err := s.RecoverDeadWorkers(ctx, 5*time.Second)
	if err != nil || len(rec) != 1 || rec[0].JobID != id || rec[0].Attempt != j.Attempt+1 {
		t.Fatalf("recovered %+v (%v), want the gang at attempt %d", rec, err, j.Attempt+1)
	}
	got, _ := s.Get(ctx, id)
	if got.State != jobs.StateQueued || got.Requeues != 1 || got.Placed != nil {
		t.Fatalf("after recovery: %s requeues %d placed %v", got.State, got.Requeues, got.Placed)
	}
	if b, _ := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w0"}, live); len(b.Lost) != 1 {
		t.Fatalf("the surviving member's worker was not told its attempt is over: %+v", b)
	}
	if n, _ := s.Redis().SCard(ctx, s.Namespace().WorkerJobs("w0")).Result(); n != 0 {
		t.Errorf("w0 still lists the recovered gang")
	}
}

// A member claim and the last member's finish that committed but lost
// their replies give the same answer when retried: the member is claimed
// once, the gang starts once, and it ends with one usage record.
func TestGangClaimAndFinishWhoseRepliesWereLost(t *testing.T) {
	t.Parallel()
	s := newLossyStore(t)
	ctx := context.Background()
	id, ds := placedGang(t, s.store)
	if _, ok, _ := s.ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1"); !ok {
		t.Fatal("member 0's claim")
	}
	check := s.loseNext(t, id)
	if _, _, err := s.ClaimMember(ctx, ds[1], 2, "w1", "i1", ""); err == nil {
		t.Fatal("the claim whose reply was lost returned no error")
	}
	check()
	j, ok, err := s.ClaimMember(ctx, ds[1], 2, "w1", "i1", "")
	if err != nil || !ok || j.State != jobs.StateRunning || j.Worker != "w0" {
		t.Fatalf("the retried claim = %v %v %s on %q; want the running gang", ok, err, j.State, j.Worker)
	}
	// Another incarnation of w1 is not the one that claimed: once i1 is
	// registered, it is fenced.
	if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w1", Incarnation: "i1"}, []queues.Delivery{{JobID: id, Attempt: j.Attempt}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ClaimMember(ctx, ds[1], 2, "w1", "other", ""); ok || !errors.Is(err, queues.ErrFenced) {
		t.Fatalf("a claim by another incarnation = %v, %v; want fenced", ok, err)
	}
	code := 0
	if end, _ := s.FinishMember(ctx, j, "w1", 1, jobs.StateSucceeded, &code, ""); end != queues.MemberDone {
		t.Fatalf("member 1's finish = %v", end)
	}
	check = s.loseNext(t, id)
	if _, err := s.FinishMember(ctx, j, "w0", 0, jobs.StateSucceeded, &code, ""); err == nil {
		t.Fatal("the finish whose reply was lost returned no error")
	}
	check()
	if end, err := s.FinishMember(ctx, j, "w0", 0, jobs.StateSucceeded, &code, ""); end != queues.JobEnded || err != nil {
		t.Fatalf("the retried last finish = %v, %v; want JobEnded", end, err)
	}
	us, _ := usageIn(ctx, s.Store, s.clock.Now().Add(-time.Hour), s.clock.Now().Add(time.Hour))
	if len(us) != 1 || us[0].Outcome != "succeeded" {
		t.Fatalf("usage %+v, want one succeeded record", us)
	}
}

// A spot notice on member 1's worker is carried out by member 0 (which
// checkpoints): its requeue counts one preemption and one against the
// spot budget, and the request dies with the attempt.
func TestGangSpotNoticeOnAMembersWorkerCountsOnce(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	id, ds := placedGang(t, s)
	j := startGang(t, s, id, ds)
	if ok, err := s.RequestSpotPreempt(ctx, id, j.Attempt, queues.QueueBurst, "spot notice"); !ok || err != nil {
		t.Fatalf("RequestSpotPreempt = %v, %v", ok, err)
	}
	moved, err := s.Requeue(ctx, j, "w0", queues.Requeue{Preempt: true})
	if err != nil || moved.Attempt != j.Attempt+1 || moved.Queue != queues.QueueBurst {
		t.Fatalf("member 0's requeue = %+v, %v", moved, err)
	}
	got, _ := s.Get(ctx, id)
	if got.Preemptions != 1 || got.SpotPreemptions != 1 {
		t.Fatalf("preemptions %d, spot %d; want 1 and 1", got.Preemptions, got.SpotPreemptions)
	}
	if v, _ := s.Redis().HExists(ctx, s.Namespace().Job(id), "preempt_spot").Result(); v {
		t.Error("the spot flag outlived the attempt it was requested for")
	}
}

// Two members of a gang may share a worker: each member's end is its own,
// so the gang succeeds once both ended, and a member's replayed end does
// not stand in for the other's.
func TestGangOfMembersOnOneWorkerSucceeds(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sp := spec("")
	sp.Size = jobs.Size{Slots: 1, Replicas: 2}
	sub, err := s.Submit(ctx, sp, queues.QueueLoan)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Place(ctx, sub.Job.ID, 1, []string{"w0", "w0"}); err != nil || n != 2 {
		t.Fatalf("Place = %d, %v", n, err)
	}
	ds := placedTasks(t, s, "w0")
	if len(ds) != 2 {
		t.Fatalf("deliveries %+v, want both members on w0", ds)
	}
	var j jobs.Job
	for _, d := range ds {
		var ok bool
		if j, ok, err = s.ClaimMember(ctx, d, 2, "w0", "i0", "h0:1"); err != nil || !ok {
			t.Fatalf("claim of member %d = %v, %v", d.Member, ok, err)
		}
	}
	if j.State != jobs.StateRunning {
		t.Fatalf("the gang is %s after both claims", j.State)
	}
	code := 0
	for range 2 { // the second is a replay of member 1's end
		if end, err := s.FinishMember(ctx, j, "w0", 1, jobs.StateSucceeded, &code, ""); end != queues.MemberDone || err != nil {
			t.Fatalf("member 1's success = %v, %v; want MemberDone", end, err)
		}
	}
	if end, _ := s.FinishMember(ctx, j, "w0", 0, jobs.StateSucceeded, &code, ""); end != queues.JobEnded {
		t.Fatalf("member 0's success = %v, want JobEnded", end)
	}
	if got, _ := s.Get(ctx, sub.Job.ID); got.State != jobs.StateSucceeded {
		t.Fatalf("the gang is %s", got.State)
	}
	// A member index the placement does not give this worker is fenced.
	if end, _ := s.FinishMember(ctx, j, "w1", 0, jobs.StateSucceeded, &code, ""); end != queues.MemberFenced {
		t.Fatalf("a finish by a worker holding no member = %v", end)
	}
}

// Held says a claimed member should wait on only while every unclaimed
// member's delivery is in the queue of a live worker that is not draining.
func TestHeld(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	held := func(s *store, id string, attempt int) bool {
		t.Helper()
		ok, err := s.Held(ctx, id, attempt, 2)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	id, ds := placedGang(t, s)
	if _, ok, err := s.ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1"); err != nil || !ok {
		t.Fatalf("member 0's claim = %v, %v", ok, err)
	}
	if held(s, id, ds[0].Attempt) {
		t.Fatal("held, with member 1's worker never registered")
	}
	if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w1"}, nil); err != nil {
		t.Fatal(err)
	}
	if !held(s, id, ds[0].Attempt) {
		t.Fatal("not held, with member 1's delivery waiting on live w1")
	}
	if held(s, id, ds[0].Attempt-1) {
		t.Fatal("held at an attempt the placement is not for")
	}
	if err := registry.New(s).RequestDrain(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	if held(s, id, ds[0].Attempt) {
		t.Fatal("held, with member 1's worker draining")
	}

	// Another gang, in a namespace of its own: its member 1's delivery is
	// gone.
	s, _ = newStore(t)
	id2, ds2 := placedGang(t, s)
	if _, ok, _ := s.ClaimMember(ctx, ds2[0], 2, "w0", "i0", "h0:1"); !ok {
		t.Fatal("member 0's claim failed")
	}
	if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w1"}, nil); err != nil {
		t.Fatal(err)
	}
	if !held(s, id2, ds2[0].Attempt) {
		t.Fatal("not held, with member 1's delivery waiting on live w1")
	}
	insp := asynq.NewInspectorFromRedisClient(s.Redis())
	if err := insp.DeleteTask(s.Namespace().AsynqQueue(queues.PlaceQueue("w1")), queues.MemberTaskID(id2, ds2[1].Attempt, 1)); err != nil {
		t.Fatal(err)
	}
	if held(s, id2, ds2[0].Attempt) {
		t.Fatal("held, with member 1's delivery gone")
	}
	// Once every member is claimed, nobody is waited on.
	if _, ok, _ := s.ClaimMember(ctx, ds2[1], 2, "w1", "", ""); !ok {
		t.Fatal("member 1's claim failed")
	}
	if held(s, id2, ds2[0].Attempt) {
		t.Fatal("held, with every member claimed")
	}
}

// TestGangCountsOneRunPerAttempt: a gang's attempt is one run, counted by
// the claim of its last member, not one per member, and not by replays.
func TestGangCountsOneRunPerAttempt(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	id, ds := placedGang(t, s)
	j := startGang(t, s, id, ds)
	if j.Runs != 1 {
		t.Fatalf("a started gang of two has %d runs, want 1", j.Runs)
	}
	for i, w := range []string{"w0", "w1"} {
		if _, ok, err := s.ClaimMember(ctx, ds[i], 2, w, "i"+w[1:], ""); !ok || err != nil {
			t.Fatalf("replay of member %d: %v %v", i, ok, err)
		}
	}
	j, err := s.Get(ctx, id)
	if err != nil || j.Runs != 1 || j.State != jobs.StateRunning {
		t.Fatalf("after replays: %s runs %d (%v); want running with runs 1", j.State, j.Runs, err)
	}
}
