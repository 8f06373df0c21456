package queues_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestRegisterTakesOverThePreviousIncarnation: a process restarted under the
// same ID while the old one still holds a job on record gets that job
// requeued at once (not after worker_ttl, which never comes while the new
// one beats), and the old process is fenced and records nothing.
func TestRegisterTakesOverThePreviousIncarnation(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	old := queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "aaaa"}
	if _, err := s.Register(ctx, old); err != nil {
		t.Fatal(err)
	}
	sub, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	j, ok, err := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w1")
	if !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if _, err := s.Checkpoint(ctx, j, "w1", `"step=3"`); err != nil {
		t.Fatal(err)
	}
	running := []queues.Delivery{{JobID: j.ID, Attempt: 1}}
	if b, err := s.Heartbeat(ctx, old, running); err != nil || b.Fenced || len(b.Lost) != 0 {
		t.Fatalf("old beat: %+v %v", b, err)
	}
	c.Add(time.Second) // well under any worker_ttl

	b, err := s.Register(ctx, queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "bbbb"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.TakenOver) != 1 || b.TakenOver[0].JobID != j.ID || b.TakenOver[0].Attempt != 2 {
		t.Fatalf("taken over: %+v", b.TakenOver)
	}
	got, _ := s.Get(ctx, j.ID)
	if got.State != jobs.StateQueued || got.Attempt != 2 || got.Checkpoint != `"step=3"` {
		t.Fatalf("after takeover: state %s attempt %d checkpoint %q", got.State, got.Attempt, got.Checkpoint)
	}
	if n := pending(t, s, queues.QueueCore); n != 2 { // attempt 1 (never dequeued here) and attempt 2
		t.Fatalf("core pending = %d, want 2", n)
	}
	// The old process wakes: fenced, and its result is not recorded.
	if b, _ := s.Heartbeat(ctx, old, running); !b.Fenced {
		t.Fatal("the old incarnation was not fenced")
	}
	if ok, _ := s.Finish(ctx, j, "w1", jobs.StateSucceeded, nil, ""); ok {
		t.Fatal("the old incarnation recorded a result")
	}
	// The new one keeps beating, and registering again changes nothing.
	if b, _ := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "bbbb"}, nil); b.Fenced {
		t.Fatal("the new incarnation was fenced")
	}
	if b, _ := s.Register(ctx, queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "bbbb"}); len(b.TakenOver) != 0 {
		t.Fatalf("re-registering took over %+v", b.TakenOver)
	}
}

// TestRegisterAfterRecoveryClearsTheTombstone: a process restarted after the
// controller declared its predecessor dead keeps its ID; the predecessor
// stays fenced.
func TestRegisterAfterRecoveryClearsTheTombstone(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	old := queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "aaaa"}
	s.Register(ctx, old)
	c.Add(10 * time.Second)
	if _, err := s.RecoverDeadWorkers(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(ctx, queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "bbbb"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "bbbb"}, nil); b.Fenced {
		t.Fatal("the new incarnation was fenced by its predecessor's tombstone")
	}
	if b, _ := s.Heartbeat(ctx, old, nil); !b.Fenced {
		t.Fatal("the recovered incarnation was not fenced")
	}
}

// TestBeatNamesAttemptsAnOldIncarnationClaimed: after a takeover, an old
// process that wakes can still claim under the ID before its next beat
// fences it; it then stops that attempt unrecorded. The new process's beats
// name such an attempt once it is older than any claim in flight, and the
// new process, which did not end it, requeues it.
func TestBeatNamesAttemptsAnOldIncarnationClaimed(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	fresh := queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "bbbb"}
	s.Register(ctx, queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "aaaa"})
	if _, err := s.Register(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	sub, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	// A claim that names no incarnation (the check is skipped), as an old
	// process's claim was before ClaimAs.
	j, ok, err := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w1")
	if !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	c.Add(time.Second) // a claim this recent may be the new process's own, not yet reported
	if b, _ := s.Heartbeat(ctx, fresh, nil); len(b.Unrecorded) != 0 {
		t.Fatalf("named a fresh claim: %+v", b.Unrecorded)
	}
	// The new process's own attempts are never named.
	sub2, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	own, _, _ := s.Claim(ctx, queues.Delivery{JobID: sub2.Job.ID, Attempt: 1}, "w1")
	c.Add(time.Minute)
	b, err := s.Heartbeat(ctx, fresh, []queues.Delivery{{JobID: own.ID, Attempt: 1}})
	want := []queues.Delivery{{JobID: j.ID, Attempt: 1}}
	if err != nil || !slices.Equal(b.Unrecorded, want) {
		t.Fatalf("beat named %+v (%v), want %+v", b.Unrecorded, err, want)
	}
	if got, _ := s.Get(ctx, j.ID); got.State != jobs.StateRunning || got.Attempt != 1 {
		t.Fatalf("the beat changed the attempt it named: %s attempt %d", got.State, got.Attempt)
	}
	// An attempt named by a number the record does not hold is not
	// requeued: the fence is the attempt, not the job.
	rs, err := s.RequeueUnrecorded(ctx, fresh, append(want, queues.Delivery{JobID: own.ID, Attempt: 2}))
	if err != nil || len(rs) != 1 || rs[0].JobID != j.ID || rs[0].Attempt != 2 {
		t.Fatalf("requeued %+v (%v), want %s at attempt 2", rs, err, j.ID)
	}
	if got, _ := s.Get(ctx, own.ID); got.State != jobs.StateRunning || got.Attempt != 1 {
		t.Fatalf("the new process's own job: %s attempt %d", got.State, got.Attempt)
	}
	if ok, _ := s.Finish(ctx, j, "w1", jobs.StateSucceeded, nil, ""); ok {
		t.Fatal("the old process recorded the orphan's result")
	}
	if b, _ := s.Heartbeat(ctx, fresh, []queues.Delivery{{JobID: own.ID, Attempt: 1}}); len(b.Unrecorded) != 0 {
		t.Fatalf("named again after the requeue: %+v", b.Unrecorded)
	}
}

// A process paused past a restart under its --id cannot claim: the claim
// names its incarnation, which is no longer the one registered.
func TestAnOldIncarnationCannotClaim(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	s.Register(ctx, queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "aaaa"})
	if _, err := s.Register(ctx, queues.WorkerInfo{ID: "w1", Slots: 1, Incarnation: "bbbb"}); err != nil {
		t.Fatal(err)
	}
	sub, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	d := queues.Delivery{JobID: sub.Job.ID, Attempt: 1}
	if _, ok, err := s.ClaimAs(ctx, d, "w1", "aaaa"); ok || !errors.Is(err, queues.ErrFenced) {
		t.Fatalf("the old incarnation claimed: ok %v, err %v", ok, err)
	}
	if got, _ := s.Get(ctx, sub.Job.ID); got.State != jobs.StateQueued {
		t.Fatalf("a refused claim changed the job: %s", got.State)
	}
	if _, ok, err := s.ClaimAs(ctx, d, "w1", "bbbb"); !ok || err != nil {
		t.Fatalf("the current incarnation could not claim: ok %v, err %v", ok, err)
	}
}
