package queues_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Every way a job can end must take it out of the active index, or the
// controller would plan for work that no longer exists.
func TestActiveJobsTracksEveryEnd(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	submit := func() jobs.Job {
		sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		return sub.Job
	}
	claim := func(j jobs.Job, w string) jobs.Job {
		got, ok, err := s.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: j.Attempt}, w)
		if !ok || err != nil {
			t.Fatalf("claim %s: %v %v", j.ID, ok, err)
		}
		return got
	}
	finished, cancelledQueued, cancelledWhileRequeued, lostCancelled := submit(), submit(), submit(), submit()
	stillQueued, stillRunning, requeued := submit(), submit(), submit()

	code := 0
	s.Finish(ctx, claim(finished, "w"), "w", jobs.StateSucceeded, &code, "")
	s.Cancel(ctx, cancelledQueued.ID)
	r := claim(cancelledWhileRequeued, "w")
	s.Cancel(ctx, r.ID)
	s.Requeue(ctx, r, "w", queues.Requeue{Reason: "draining"})
	claim(lostCancelled, "dead")
	s.Cancel(ctx, lostCancelled.ID)
	s.Heartbeat(ctx, queues.WorkerInfo{ID: "dead"}, nil)
	claim(stillRunning, "w")
	rq := claim(requeued, "w")
	s.Requeue(ctx, rq, "w", queues.Requeue{Reason: "draining"})
	c.Add(time.Minute)
	if _, err := s.RecoverDeadWorkers(ctx, time.Second); err != nil {
		t.Fatal(err)
	}

	active, err := s.ActiveJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range active {
		got = append(got, j.ID)
	}
	want := []string{stillQueued.ID, stillRunning.ID, requeued.ID}
	sort.Strings(got)
	sort.Strings(want)
	if len(got) != len(want) {
		t.Fatalf("active %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("active %v, want %v", got, want)
		}
	}
}

// Index entries of jobs past their retention are dropped; newer ones stay.
func TestTrimIndexDropsOnlyExpiredEntries(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := context.Background()
	old, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	c.Add(queues.DefaultRetention + jobs.MaxTimeout + time.Hour)
	fresh, _ := s.Submit(ctx, spec(""), queues.QueueCore)
	if err := s.TrimIndex(ctx); err != nil {
		t.Fatal(err)
	}
	ids, err := s.Redis().ZRange(ctx, s.Namespace().JobIndex(), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != fresh.Job.ID || ids[0] == old.Job.ID {
		t.Fatalf("index after trim: %v, want only %s", ids, fresh.Job.ID)
	}
}

// ActiveJobs keeps specs between calls but always reads the changing fields.
func TestActiveJobsSeesChangesBetweenCalls(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sp := spec("")
	sp.Params = map[string]any{"lr": 0.5}
	sub, _ := s.Submit(ctx, sp, queues.QueueCore)
	first, err := s.ActiveJobs(ctx)
	if err != nil || len(first) != 1 || first[0].State != jobs.StateQueued || first[0].Spec.Params["lr"] != 0.5 {
		t.Fatalf("first read: %+v %v", first, err)
	}
	j, _, _ := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w")
	s.Checkpoint(ctx, j, "w", "c9")
	second, _ := s.ActiveJobs(ctx)
	if len(second) != 1 || second[0].State != jobs.StateRunning || second[0].Worker != "w" || second[0].Checkpoint != "c9" ||
		second[0].Spec.Params["lr"] != 0.5 || second[0].Spec.Command[0] != "true" {
		t.Fatalf("second read: %+v", second)
	}
	code := 0
	s.Finish(ctx, j, "w", jobs.StateSucceeded, &code, "")
	if third, _ := s.ActiveJobs(ctx); len(third) != 0 {
		t.Fatalf("an ended job is still active: %+v", third)
	}
}
