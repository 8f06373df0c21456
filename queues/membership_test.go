package queues_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Each step of a job's life shows in one of the memberships, so a reader
// comparing two reads learns which records to read again: the active index
// on submit and end, the worker's set on claim, the ended attempts on a
// requeue even when the job is claimed again before the next read.
func TestActiveMembershipShowsEveryStep(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	read := func(since time.Time) queues.Membership {
		t.Helper()
		m, err := s.ActiveMembership(ctx, []string{"w1"}, since)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Job.ID
	if m := read(time.Time{}); !slices.Equal(m.Active, []string{id}) || len(m.OnWorker["w1"]) != 0 || len(m.Ended) != 0 {
		t.Fatalf("after submit: %+v", m)
	}
	j, ok, err := s.Claim(ctx, queues.Delivery{JobID: id, Attempt: 1}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if m := read(time.Time{}); !slices.Equal(m.OnWorker["w1"], []string{id}) {
		t.Fatalf("after claim: %+v", m)
	}
	since := c.Now()
	c.Add(time.Second)
	r, err := s.Requeue(ctx, j, "w1", queues.Requeue{Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	j, ok, err = s.Claim(ctx, queues.Delivery{JobID: id, Attempt: r.Attempt}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim again: %v %v", ok, err)
	}
	m := read(since)
	if !slices.Equal(m.OnWorker["w1"], []string{id}) || len(m.Ended) != 1 || m.Ended[0].JobID() != id ||
		!m.Ended[0].End.Equal(c.Now().Truncate(time.Millisecond)) {
		t.Fatalf("after requeue and claim: %+v", m)
	}
	if last := read(time.Time{}); len(last.Ended) != 1 || last.Ended[0].Key != m.Ended[0].Key {
		t.Fatalf("zero since reads the last end only: %+v", last)
	}
	if later := read(c.Now().Add(time.Millisecond)); len(later.Ended) != 0 {
		t.Fatalf("ends after the requeue: %+v", later.Ended)
	}
	if _, err := s.Finish(ctx, j, "w1", jobs.StateSucceeded, new(int), ""); err != nil {
		t.Fatal(err)
	}
	if m := read(since); len(m.Active) != 0 || len(m.OnWorker["w1"]) != 0 || len(m.Ended) != 2 {
		t.Fatalf("after finish: %+v", m)
	}
}

// TestAQueuedCancelIsADeparture: a queued job's cancel ends no attempt,
// and shows to ActiveChanges as a departure, an ended entry whose job
// ended; a running job's cancel request departs nothing; departures older
// than the time kept are trimmed as new ones are written.
func TestAQueuedCancelIsADeparture(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	since := c.Now()
	queued, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	running, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Claim(ctx, queues.Delivery{JobID: running.Job.ID, Attempt: 1}, "w1"); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	c.Add(time.Second)
	for _, id := range []string{queued.Job.ID, running.Job.ID} {
		if _, err := s.Cancel(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	m, err := s.ActiveChanges(ctx, nil, since, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Ended) != 1 || m.Ended[0].JobID() != queued.Job.ID || !m.Ended[0].JobEnded() ||
		!m.Ended[0].End.Equal(c.Now().Truncate(time.Millisecond)) || m.Count != 1 {
		t.Fatalf("after a queued and a running cancel: ended %+v, count %d; want the queued job's departure, one job left", m.Ended, m.Count)
	}
	if full, err := s.ActiveMembership(ctx, nil, since); err != nil || len(full.Ended) != 0 {
		t.Fatalf("a whole read lists departures too: %+v %v", full.Ended, err)
	}

	c.Add(time.Hour)
	later, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(ctx, later.Job.ID); err != nil {
		t.Fatal(err)
	}
	left, err := s.Redis().ZRange(ctx, s.Namespace().Departed(), 0, -1).Result()
	if err != nil || !slices.Equal(left, []string{later.Job.ID}) {
		t.Fatalf("departures kept an hour on: %v %v, want the last one only", left, err)
	}
}

// ActiveJobsOf reads the records asked for, skips the spec read where the
// caller has it, and leaves out jobs that ended or never existed.
func TestActiveJobsOfReadsOnlyWhatIsAsked(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	var ids []string
	for range 3 {
		sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sub.Job.ID)
	}
	if _, err := s.Cancel(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	known := spec("")
	known.Template = "as the caller holds it"
	got, err := s.ActiveJobsOf(ctx, []string{ids[0], ids[1], ids[2], "no-such-job"}, func(id string) (jobs.Spec, bool) {
		return known, id == ids[1]
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[ids[0]].Spec.Template != "t" || got[ids[1]].Spec.Template != known.Template ||
		got[ids[0]].State != jobs.StateQueued || got[ids[0]].Attempt != 1 {
		t.Fatalf("ActiveJobsOf = %+v", got)
	}
}
