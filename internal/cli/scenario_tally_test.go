package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// TestScenarioTallyAnnouncesEachPhaseOnceAndSumsUp: the demo names each
// move of the policy the first time it shows, not at every repeat, and
// ends with the counts and waits of what it saw; fixed workers coming up
// are not launches.
func TestScenarioTallyAnnouncesEachPhaseOnceAndSumsUp(t *testing.T) {
	var said []string
	say := func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }
	tally := newScenarioTally(say, map[string]bool{"spot": true, "ondemand": true, "fixed": false})
	for _, ev := range []events.Event{
		{Type: events.TypeWorkerUp, Worker: "vm-1", Data: map[string]any{"pool": "fixed"}},
		{Type: events.TypeWorkerUp, Worker: "spot-1", Data: map[string]any{"pool": "spot"}},
		{Type: events.TypeWorkerUp, Worker: "spot-2", Data: map[string]any{"pool": "spot"}},
		{Type: events.TypeWorkerUp, Worker: "ondemand-1", Data: map[string]any{"pool": "ondemand"}},
		{Type: events.TypeJobMoved, JobID: "j1", Queue: "loan", Reason: "lent to fixed capacity"},
		{Type: events.TypeJobMoved, JobID: "j2", Queue: "loan", Reason: "lent to fixed capacity"},
		{Type: events.TypeJobMoved, JobID: "j3", Queue: "overflow"},
		{Type: events.TypeJobRequeued, JobID: "j1", Queue: "burst", Reason: "preempted: reclaim (2 core queued)"},
		{Type: events.TypeJobRequeued, JobID: "j4", Queue: "burst", Reason: "preempted: migrate"},
		{Type: events.TypeJobRunning, JobID: "c1", Data: map[string]any{"class": "core", "wait_seconds": 0.5}},
		{Type: events.TypeJobRunning, JobID: "c2", Data: map[string]any{"class": "core", "wait_seconds": 3.0}},
		{Type: events.TypeJobRunning, JobID: "c3", Data: map[string]any{"class": "core", "wait_seconds": 1.0}},
		{Type: events.TypeJobRunning, JobID: "b1", Data: map[string]any{"class": "burst", "wait_seconds": 60.0}},
		{Type: events.TypeWorkerStopped, Worker: "spot-1", Data: map[string]any{"pool": "spot"}},
		{Type: events.TypeWorkerStopped, Worker: "spot-2", Data: map[string]any{"pool": "spot"}},
		{Type: events.TypeWorkerStopped, Worker: "vm-1", Data: map[string]any{"pool": "fixed"}},
	} {
		tally.observe(ev)
	}
	tally.drained(2) // announced already, by the first release
	tally.drained(0)
	got := strings.Join(said, "\n")
	for _, want := range []string{"scale-up: the policy launched spot worker spot-1", "lending: burst job j1", "reclaim: core work takes back the fixed slot of burst job j1",
		"drain: the spike is served; idle spot worker spot-1 was released"} {
		if strings.Count(got, want) != 1 {
			t.Errorf("announcements:\n%s\nwant %q once", got, want)
		}
	}
	if len(said) != 4 {
		t.Errorf("%d announcements, want one per phase (4):\n%s", len(said), got)
	}
	sum := tally.summary("paid 0.0100 (fixed 0.0040, elastic 0.0060)")
	want := "summary: 3 elastic launches (ondemand 1, spot 2), 2 released, 2 lent to fixed, 1 reclaimed for core, core waited median 1.0s, max 3.0s (3 starts), paid 0.0100 (fixed 0.0040, elastic 0.0060)"
	if sum != want {
		t.Errorf("summary\n%q\nwant\n%q", sum, want)
	}
	if s := newScenarioTally(say, nil).summary(""); !strings.Contains(s, "0 elastic launches") || !strings.Contains(s, "no core job ran") || !strings.Contains(s, "cost unknown") {
		t.Errorf("empty summary %q", s)
	}
}
