package queues_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues"
)

// TestStepDurations reads a step's run times from the pipeline's runs: the
// successful ones only, newest run first, however far its run advanced.
func TestStepDurations(t *testing.T) {
	t.Parallel()
	s, clk := newStore(t)
	ctx := context.Background()
	def := pipeline.Pipeline{Schedule: "@daily", Steps: map[string]pipeline.Step{"work": {Template: "t"}, "other": {Template: "t"}}}
	// run runs step work of a new run for d, ending in state.
	run := func(i int, d time.Duration, state jobs.State) {
		t.Helper()
		clk.Add(time.Minute)
		r, _, err := s.CreateRun(ctx, queues.NewRun{Pipeline: "p", Definition: def, Scheduled: clk.Now(),
			Trigger: queues.TriggerManual, State: pipeline.RunRunning})
		if err != nil {
			t.Fatal(err)
		}
		sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := s.StartStep(ctx, r.ID, "work", sub.Job.ID); !ok || err != nil {
			t.Fatalf("StartStep: %v %v", ok, err)
		}
		j, ok, err := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w")
		if !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		clk.Add(d)
		if ok, err := s.Finish(ctx, j, "w", state, nil, ""); !ok || err != nil {
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

	got, err := s.StepDurations(ctx, "p", "work", 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{30 * time.Second, 20 * time.Second, 10 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("StepDurations = %v, want %v (the failed run left out)", got, want)
	}
	if got, _ := s.StepDurations(ctx, "p", "work", 2); len(got) != 2 || got[0] != 30*time.Second {
		t.Fatalf("the last 2 runs: %v, want [30s 20s]", got)
	}
	if got, _ := s.StepDurations(ctx, "p", "other", 10); len(got) != 0 {
		t.Fatalf("a step that never ran: %v", got)
	}
}
