package flows_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

var twoSteps = pipeline.Pipeline{Schedule: "@daily", Steps: map[string]pipeline.Step{
	"a": {Template: "t"}, "b": {Template: "t", DependsOn: []string{"a"}}}}

// TestCreateRunOncePerFiring: two controllers firing the same time get
// one run, and the firing moves the cursor in the same step.
func TestCreateRunOncePerFiring(t *testing.T) {
	t.Parallel()
	s, _, clk := newStores(t)
	ctx := context.Background()
	at := clk.Now().Truncate(time.Minute)
	nr := flows.NewRun{Pipeline: "p", Definition: twoSteps, Scheduled: at, Trigger: flows.TriggerSchedule,
		State: pipeline.RunRunning, DedupeKey: "p@1", AdvanceCursor: true}
	first, created, err := s.CreateRun(ctx, nr)
	if err != nil || !created {
		t.Fatalf("first CreateRun: created=%v err=%v", created, err)
	}
	if first.State != pipeline.RunRunning || len(first.Steps) != 2 || first.Steps["a"].State != pipeline.StepPending {
		t.Fatalf("new run %+v: want running with both steps pending", first)
	}
	second, created, err := s.CreateRun(ctx, nr)
	if err != nil || created || second.ID != first.ID {
		t.Fatalf("second CreateRun: %s created=%v err=%v; want run %s again", second.ID, created, err, first.ID)
	}
	if h, err := s.HandledUntil(ctx, "p"); err != nil || !h.Equal(at) {
		t.Fatalf("HandledUntil = %v, %v; want %v", h, err, at)
	}
	// The cursor never moves back.
	if moved, err := s.MarkHandled(ctx, "p", at.Add(-time.Hour)); err != nil || moved {
		t.Fatalf("MarkHandled of an earlier time: moved=%v err=%v", moved, err)
	}
	if moved, err := s.MarkHandled(ctx, "p", at.Add(time.Hour)); err != nil || !moved {
		t.Fatalf("MarkHandled of a later time: moved=%v err=%v", moved, err)
	}
	if _, _, err := s.CreateRun(ctx, flows.NewRun{Pipeline: "p", State: pipeline.RunSucceeded}); err == nil {
		t.Fatal("CreateRun accepted a run born succeeded")
	}
	if _, err := s.GetRun(ctx, "nope"); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("GetRun of an unknown run: %v, want ErrNotFound", err)
	}
}

// TestRunLifecycle: a step starts once; an ended run takes no more
// writes, and its end cancels running steps, skips pending ones and
// hands back the jobs to cancel.
func TestRunLifecycle(t *testing.T) {
	t.Parallel()
	s, _, clk := newStores(t)
	ctx := context.Background()
	r, _, err := s.CreateRun(ctx, flows.NewRun{Pipeline: "p", Definition: twoSteps, Scheduled: clk.Now(),
		Trigger: flows.TriggerManual, State: pipeline.RunRunning, Deadline: clk.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.StartStep(ctx, r.ID, "a", "job-a"); !ok || err != nil {
		t.Fatalf("StartStep: %v %v", ok, err)
	}
	if ok, _ := s.StartStep(ctx, r.ID, "a", "job-a2"); ok {
		t.Fatal("a running step started a second time")
	}
	active, err := s.ActiveRuns(ctx)
	if err != nil || len(active) != 1 || active[0].Steps["a"] != (flows.StepRecord{State: pipeline.StepRunning, JobID: "job-a"}) {
		t.Fatalf("ActiveRuns = %+v, %v; want the run with step a running as job-a", active, err)
	}
	if first, err := s.MarkDeadlineMissed(ctx, r.ID); !first || err != nil {
		t.Fatalf("MarkDeadlineMissed: %v %v", first, err)
	}
	if again, _ := s.MarkDeadlineMissed(ctx, r.ID); again {
		t.Fatal("a deadline miss was recorded twice")
	}
	ended, orphans, err := s.EndRun(ctx, r.ID, pipeline.RunCancelled, "test")
	if err != nil || !ended || !slices.Equal(orphans, []string{"job-a"}) {
		t.Fatalf("EndRun = %v %v %v; want ended with orphan job-a", ended, orphans, err)
	}
	if again, _, _ := s.EndRun(ctx, r.ID, pipeline.RunFailed, ""); again {
		t.Fatal("a run ended twice")
	}
	if ok, _ := s.SetStepStates(ctx, r.ID, map[string]pipeline.StepState{"b": pipeline.StepRunning}); ok {
		t.Fatal("an ended run took a step state")
	}
	got, err := s.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != pipeline.RunCancelled || got.Reason != "test" || got.Steps["a"].State != pipeline.StepCancelled ||
		got.Steps["b"].State != pipeline.StepSkipped || got.FinishedAt.IsZero() || got.DeadlineMissedAt.IsZero() {
		t.Fatalf("ended run %+v", got)
	}
	if active, _ := s.ActiveRuns(ctx); len(active) != 0 {
		t.Fatalf("an ended run is still active: %+v", active)
	}
	if list, err := s.ListRuns(ctx, "p", 0); err != nil || len(list) != 1 || list[0].ID != r.ID {
		t.Fatalf("ListRuns = %+v, %v", list, err)
	}
}

// TestStepJobsAndRunTimes reads a step's run times from the pipeline's
// runs: the successful ones only, newest run first, however far its run
// advanced. The runs come from the flows store, the times from the job
// store, as the pipelines loop reads them.
func TestStepJobsAndRunTimes(t *testing.T) {
	t.Parallel()
	s, js, clk := newStores(t)
	ctx := context.Background()
	def := pipeline.Pipeline{Schedule: "@daily", Steps: map[string]pipeline.Step{"work": {Template: "t"}, "other": {Template: "t"}}}
	// run runs step work of a new run for d, ending in state.
	run := func(i int, d time.Duration, state jobs.State) {
		t.Helper()
		clk.Add(time.Minute)
		r, _, err := s.CreateRun(ctx, flows.NewRun{Pipeline: "p", Definition: def, Scheduled: clk.Now(),
			Trigger: flows.TriggerManual, State: pipeline.RunRunning})
		if err != nil {
			t.Fatal(err)
		}
		sub, err := js.Submit(ctx, spec(""), queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := s.StartStep(ctx, r.ID, "work", sub.Job.ID); !ok || err != nil {
			t.Fatalf("StartStep: %v %v", ok, err)
		}
		j, ok, err := js.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w")
		if !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		clk.Add(d)
		if ok, err := js.Finish(ctx, j, "w", state, nil, ""); !ok || err != nil {
			t.Fatalf("finish: %v %v", ok, err)
		}
		if i%2 == 0 { // half the runs have moved their step on, half not yet
			st := pipeline.StepSucceeded
			if state != jobs.StateSucceeded {
				st = pipeline.StepFailed
			}
			if _, err := s.SetStepStates(ctx, r.ID, map[string]pipeline.StepState{"work": st}); err != nil {
				t.Fatal(err)
			}
		}
	}
	run(0, 10*time.Second, jobs.StateSucceeded)
	run(1, 99*time.Second, jobs.StateFailed)
	run(2, 20*time.Second, jobs.StateSucceeded)
	run(3, 30*time.Second, jobs.StateSucceeded)

	durations := func(step string, runs int) []time.Duration {
		t.Helper()
		ids, err := s.StepJobs(ctx, "p", step, runs)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := js.RunTimes(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	if got, want := durations("work", 10), []time.Duration{30 * time.Second, 20 * time.Second, 10 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("run times = %v, want %v (the failed run left out)", got, want)
	}
	if got := durations("work", 2); !slices.Equal(got, []time.Duration{30 * time.Second, 20 * time.Second}) {
		t.Fatalf("the last 2 runs: %v, want [30s 20s]", got)
	}
	if got := durations("other", 10); len(got) != 0 {
		t.Fatalf("a step that never ran: %v", got)
	}
}
