package telemetry

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

func TestPreemptionReasonsAsWorkersAndTheControllerWriteThem(t *testing.T) {
	for reason, want := range map[string]string{
		"preempted: reclaim (rule 1: core job x needs the slot)": ReasonReclaim,
		"preempted: migrate (rule 4: utilization 0.20)":          ReasonMigrate,
		"preempted: repack (rule 5: worker od-1 runs 1 jobs)":    ReasonRepack,
		"preempted: spot notice":                                 ReasonSpot,
		"preempted":                                              ReasonReclaim,
		"worker draining":                                        ReasonDrain,
		"worker lost":                                            ReasonWorkerLost,
	} {
		if got, ok := PreemptionReason(reason); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", reason, got, ok, want)
		}
	}
	for _, retry := range []string{"exit code 1", "timed out after 1m0s", "connection lost"} {
		if got, ok := PreemptionReason(retry); ok {
			t.Errorf("a retry (%q) counted as a %s preemption", retry, got)
		}
	}
}

func TestObserveMapsJobEventsToInstruments(t *testing.T) {
	m := newTest(t, Options{})
	now := time.Now()
	for _, e := range []events.Event{
		{Type: events.TypeJobRunning, Data: map[string]any{"class": "burst", "pool": "spot", "wait_seconds": 2.5}, Time: now},
		{Type: events.TypeJobRunning, Data: map[string]any{"class": "burst", "pool": "spot", "wait_seconds": 0.5}, Time: now},
		{Type: events.TypeJobSucceeded, Data: map[string]any{"class": "burst"}, Time: now},
		{Type: events.TypeJobFailed, Data: map[string]any{"class": "core"}, Time: now},
		{Type: events.TypeJobCancelled, Data: map[string]any{"class": "core"}, Time: now},
		{Type: events.TypeJobRequeued, Reason: "preempted: reclaim (rule 1)", Time: now},
		{Type: events.TypeJobRequeued, Reason: "exit code 3", Time: now},
		{Type: events.TypeJobQueued, Time: now},
	} {
		m.Observe(e)
	}
	fams := scrape(t, m)
	wantHistogram(t, fams, "burst", "spot", 2, 3.0, nil)
	wantValue(t, fams, "ballast_jobs_finished_total", map[string]string{"class": "burst", "outcome": "succeeded"}, 1)
	wantValue(t, fams, "ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "failed"}, 1)
	wantValue(t, fams, "ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "cancelled"}, 1)
	wantValue(t, fams, "ballast_preemptions_total", map[string]string{"reason": "reclaim"}, 1)
}
