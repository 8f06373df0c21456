package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

func TestDevEventLines(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.Local)
	d := &devEvents{templates: map[string]string{"j1": "steps"}}
	for _, c := range []struct {
		ev   events.Event
		want string // "" for no line
	}{
		{events.Event{Type: events.TypeJobQueued, JobID: "j1", Queue: "burst", Time: at}, "09:30:00  steps            j1 queued in burst"},
		{events.Event{Type: events.TypeJobRunning, JobID: "j1", Worker: "fixed-1", Attempt: 1, Time: at}, "steps            j1 running on fixed-1 (delivery 1)"},
		// Lent before it ran: the second delivery is the first run.
		{events.Event{Type: events.TypeJobRunning, JobID: "j1", Worker: "fixed-1", Attempt: 2, Runs: 1, Time: at}, "j1 running on fixed-1 (run 1, delivery 2)"},
		{events.Event{Type: events.TypeJobRequeued, JobID: "j1", Queue: "burst", Attempt: 3, Runs: 1, Reason: "spot notice", Time: at},
			"j1 requeued to burst as delivery 3 after run 1: spot notice"},
		{events.Event{Type: events.TypeJobCheckpoint, JobID: "j1", Data: map[string]any{"checkpoint": "step=2"}, Time: at}, ""},
		{events.Event{Type: events.TypeJobFailed, JobID: "j1", Reason: "exited with code 3", Time: at}, "j1 failed: exited with code 3"},
		{events.Event{Type: events.TypeJobMoved, JobID: "j1", Queue: "loan", Attempt: 2, Reason: "lent to fixed capacity (rule 2)", Time: at},
			"j1 moved to loan as delivery 2, not yet run: lent to fixed capacity (rule 2)"},
		{events.Event{Type: events.TypeWorkerUp, Worker: "spot-1", Time: at}, "worker spot-1 up"},
		// Decoded from JSON, numbers are float64.
		{events.Event{Type: events.TypeWorkerUp, Worker: "spot-2", Data: map[string]any{"pool": "spot", "slots": 2.0}, Time: at}, "worker spot-2 up (spot, 2 slots)"},
		{events.Event{Type: events.TypeWorkerUp, Worker: "spot-3", Data: map[string]any{"pool": "spot", "slots": 1.0}, Time: at}, "worker spot-3 up (spot, 1 slot)"},
		{events.Event{Type: events.TypeWorkerStopped, Worker: "spot-2", Data: map[string]any{"pool": "spot"}, Time: at}, "worker spot-2 drained and stopped (spot)"},
		{events.Event{Type: events.TypePipelineRunStarted, Pipeline: "features", Time: at}, "pipeline features run.started"},
	} {
		got := d.line(c.ev)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.ev.Type, got, c.want)
		}
	}
	d.verbose = true
	if got := d.line(events.Event{Type: events.TypeJobCheckpoint, JobID: "j1", Data: map[string]any{"checkpoint": "step=2"}, Time: at}); !strings.Contains(got, "steps            j1 checkpoint step=2") {
		t.Errorf("verbose checkpoint: %q", got)
	}
	// A job the printer has not seen, with no store to ask, still gets a line.
	if got := d.line(events.Event{Type: events.TypeJobSucceeded, JobID: "j2", Time: at}); !strings.Contains(got, "-                j2 succeeded") {
		t.Errorf("unknown template: %q", got)
	}
}
