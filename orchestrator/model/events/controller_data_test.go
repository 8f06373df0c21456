package events

import (
	"encoding/json"
	"testing"
	"time"
)

var when = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func TestPipelineRunWire(t *testing.T) {
	started := PipelineRun{Scheduled: when, Trigger: "schedule"}
	sameWire(t, started.Data(), map[string]any{"scheduled": when, "trigger": "schedule"})
	sameWire(t, PipelineRun{Scheduled: when}.Data(), map[string]any{"scheduled": when})
	e := stored(t, `{"id":"r1.pipeline.run.started","type":"pipeline.run.started","pipeline":"p","run_id":"r1",`+
		`"time":"2026-12-01T09:00:05Z","data":{"scheduled":"2026-12-01T09:00:00Z","trigger":"schedule"}}`)
	got, ok := ParsePipelineRun(e)
	if !ok {
		t.Fatal("a stored pipeline.run.started event did not parse")
	}
	sameValue(t, "ParsePipelineRun", got, started)
	if _, ok := ParsePipelineRun(Event{Type: TypeJobQueued}); ok {
		t.Fatal("a job event parsed as a pipeline run")
	}
}

func TestPipelineDeadlineWire(t *testing.T) {
	d := PipelineDeadline{Deadline: when, Scheduled: when.Add(-time.Hour), Late: 90 * time.Second}
	sameWire(t, d.Data(), map[string]any{"deadline": when, "scheduled": when.Add(-time.Hour), "late_seconds": 90.0})
	e := stored(t, `{"id":"x","type":"pipeline.deadline_missed","pipeline":"p","run_id":"r1","time":"2026-12-01T09:01:30Z",`+
		`"data":{"deadline":"2026-12-01T09:00:00Z","scheduled":"2026-12-01T08:00:00Z","late_seconds":90}}`)
	got, ok := ParsePipelineDeadline(e)
	if !ok {
		t.Fatal("a stored deadline event did not parse")
	}
	sameValue(t, "ParsePipelineDeadline", got, d)
}

func TestSweepEventsWire(t *testing.T) {
	c := SweepCreated{Template: "train", Trials: 12, MaxParallel: 3}
	sameWire(t, c.Data(), map[string]any{"template": "train", "trials": 12, "max_parallel": 3})
	got, ok := ParseSweepCreated(stored(t, `{"id":"s.created","type":"sweep.created","sweep_id":"s","time":"2026-12-01T09:00:00Z",`+
		`"data":{"max_parallel":3,"template":"train","trials":12}}`))
	if !ok {
		t.Fatal("a stored sweep.created event did not parse")
	}
	sameValue(t, "ParseSweepCreated", got, c)

	done := SweepCompleted{Trials: 4, Counts: map[string]int{"succeeded": 3, "stopped": 1}, HasBest: true, BestTrial: 2, BestMetric: 0.25}
	// Today's producer put the sweep package's map[TrialState]int there;
	// a named string key type encodes as its string.
	type trialState string
	sameWire(t, done.Data(), map[string]any{"trials": 4, "counts": map[trialState]int{"succeeded": 3, "stopped": 1},
		"best_trial": 2, "best_metric": 0.25})
	sameWire(t, SweepCompleted{Trials: 1, Counts: map[string]int{}}.Data(), map[string]any{"trials": 1, "counts": map[trialState]int{}})
	back, ok := ParseSweepCompleted(stored(t, `{"id":"s.completed","type":"sweep.completed","sweep_id":"s","time":"2026-12-01T09:00:00Z",`+
		`"data":{"best_metric":0.25,"best_trial":2,"counts":{"stopped":1,"succeeded":3},"trials":4}}`))
	if !ok {
		t.Fatal("a stored sweep.completed event did not parse")
	}
	sameValue(t, "ParseSweepCompleted", back, done)

	s := TrialStopped{Trial: 5, Step: 7, Metric: 1.5}
	sameWire(t, s.Data(), map[string]any{"trial": 5, "step": 7, "metric": 1.5})
	st, ok := ParseTrialStopped(stored(t, `{"id":"s.stopped.5","type":"sweep.trial_stopped","sweep_id":"s","job_id":"j5",`+
		`"time":"2026-12-01T09:00:00Z","data":{"metric":1.5,"step":7,"trial":5}}`))
	if !ok {
		t.Fatal("a stored sweep.trial_stopped event did not parse")
	}
	sameValue(t, "ParseTrialStopped", st, s)
}

func TestDataLossEventsWire(t *testing.T) {
	l := DataLost{Reason: "epoch_changed", At: when, LastSeen: when.Add(-time.Minute), OldEpoch: "a", NewEpoch: "b", DetectedBy: "controller c1"}
	sameWire(t, l.Data(), map[string]any{"reason": "epoch_changed", "at": when, "last_seen": when.Add(-time.Minute),
		"old_epoch": "a", "new_epoch": "b", "detected_by": "controller c1"})
	got, ok := ParseDataLost(stored(t, `{"id":"data_lost.1","type":"system.redis_data_lost","time":"2026-12-01T09:00:00Z",`+
		`"data":{"at":"2026-12-01T09:00:00Z","detected_by":"controller c1","last_seen":"2026-12-01T08:59:00Z",`+
		`"new_epoch":"b","old_epoch":"a","reason":"epoch_changed"}}`))
	if !ok {
		t.Fatal("a stored data loss event did not parse")
	}
	sameValue(t, "ParseDataLost", got, l)

	r := Recovered{Rebuilt: 1, Rerun: 2, SkippedFinished: 3, AlreadyPresent: 4, Resubmitted: 5, NoSpec: 6}
	sameWire(t, r.Data(), map[string]any{"rebuilt": 1, "rerun": 2, "skipped_finished": 3, "already_present": 4,
		"resubmitted": 5, "no_spec": 6})
	rb, ok := ParseRecovered(stored(t, `{"id":"x","type":"system.redis_recovered","time":"2026-12-01T09:00:00Z",`+
		`"data":{"already_present":4,"no_spec":6,"rebuilt":1,"rerun":2,"resubmitted":5,"skipped_finished":3}}`))
	if !ok {
		t.Fatal("a stored recovered event did not parse")
	}
	sameValue(t, "ParseRecovered", rb, r)
}

func TestJobQueuedWire(t *testing.T) {
	spec := json.RawMessage(`{"template":"hello"}`)
	q := JobQueued{Template: "hello", Class: "burst", Team: "ml", Spec: spec}
	sameWire(t, q.Data(), map[string]any{"template": "hello", "class": "burst", "team": "ml", "spec": spec})
	o := JobQueued{Template: "hello", Class: "burst", Team: "ml", SpecOmitted: "spec larger than an event carries"}
	sameWire(t, o.Data(), map[string]any{"template": "hello", "class": "burst", "team": "ml", "spec_omitted": "spec larger than an event carries"})
	e := stored(t, `{"id":"j1.1.job.queued","type":"job.queued","job_id":"j1","time":"2026-12-01T09:00:00Z",`+
		`"data":{"class":"burst","spec_omitted":"spec larger than an event carries","team":"ml","template":"hello"}}`)
	got, ok := ParseJobQueued(e)
	if !ok {
		t.Fatal("a stored job.queued event did not parse")
	}
	sameValue(t, "ParseJobQueued", got, o)
	if JobClass(e) != "burst" {
		t.Fatalf("JobClass = %q; want burst", JobClass(e))
	}
}
