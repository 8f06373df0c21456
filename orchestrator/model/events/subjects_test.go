package events_test

import (
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

func TestSubjects(t *testing.T) {
	for _, tc := range []struct {
		subj events.Subjects
		want [6]string
	}{
		{events.Subjects{}, [6]string{"ballast.jobs.submit", "ballast.sweeps.submit", "ballast.events.job.j1", "ballast.events.worker.w1", "ballast.events.>", "ballast.control.w1"}},
		{events.Subjects{Prefix: "acme.b"}, [6]string{"acme.b.jobs.submit", "acme.b.sweeps.submit", "acme.b.events.job.j1", "acme.b.events.worker.w1", "acme.b.events.>", "acme.b.control.w1"}},
	} {
		got := [6]string{tc.subj.Submit(), tc.subj.SweepSubmit(), tc.subj.Job("j1"), tc.subj.Worker("w1"), tc.subj.All(), tc.subj.Control("w1")}
		if got != tc.want {
			t.Errorf("prefix %q: got %v, want %v", tc.subj.Prefix, got, tc.want)
		}
		if err := tc.subj.Validate(); err != nil {
			t.Errorf("prefix %q: %v", tc.subj.Prefix, err)
		}
	}
	for _, bad := range []string{"a..b", "a.*", ">", "a b", "x."} {
		if err := (events.Subjects{Prefix: bad}).Validate(); err == nil {
			t.Errorf("prefix %q: no error", bad)
		}
	}
}

func TestSubjectsFor(t *testing.T) {
	s := events.Subjects{}
	for _, tc := range []struct {
		e       events.Event
		want    string
		wantErr string
	}{
		{events.Event{Type: events.TypeJobQueued, JobID: "j1", Worker: "w1"}, "ballast.events.job.j1", ""},
		{events.Event{Type: events.TypeWorkerLost, JobID: "j1", Worker: "w1"}, "ballast.events.worker.w1", ""},
		{events.Event{Type: events.TypeJobQueued}, "", "job id"},
		{events.Event{Type: events.TypeWorkerUp}, "", "worker"},
		{events.Event{Type: events.TypeJobFailed, JobID: "j.*"}, "", "must not contain"},
		{events.Event{Type: events.TypeWorkerUp, Worker: "w 1"}, "", "must not contain"},
	} {
		got, err := s.For(tc.e)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%+v: %v", tc.e, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%+v: error %v, want one containing %q", tc.e, err, tc.wantErr)
		case got != tc.want:
			t.Errorf("%+v: subject %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestPipelineAndSweepEventsHaveTheirOwnSubjects(t *testing.T) {
	s := events.Subjects{}
	for _, tc := range []struct {
		e    events.Event
		want string
	}{
		{events.Event{Type: events.TypePipelineRunStarted, Pipeline: "nightly", RunID: "r1", JobID: "ignored"}, "ballast.events.pipeline.nightly"},
		{events.Event{Type: events.TypePipelineMissed, Pipeline: "nightly"}, "ballast.events.pipeline.nightly"},
		{events.Event{Type: events.TypeSweepTrialStopped, SweepID: "s1", JobID: "j9"}, "ballast.events.sweep.s1"},
		{events.Event{Type: events.TypeJobSucceeded, JobID: "j9", SweepID: "s1"}, "ballast.events.job.j9"},
	} {
		got, err := s.For(tc.e)
		if err != nil || got != tc.want {
			t.Errorf("%s: subject %q (%v), want %q", tc.e.Type, got, err, tc.want)
		}
	}
	if _, err := s.For(events.Event{Type: events.TypePipelineRunFailed, Pipeline: "a.b"}); err == nil {
		t.Error("a pipeline name with a dot was accepted as a subject token")
	}
	if _, err := s.For(events.Event{Type: events.TypeSweepCompleted}); err == nil {
		t.Error("a sweep event without a sweep ID was accepted")
	}
}
