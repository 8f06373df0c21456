package insight_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues/usage"
)

// TestBuildAttemptsTellsRunsFromDeliveries: a burst job lent before it ran
// (delivery 1 never ran), reclaimed from the fixed pool (2), retried after
// exit 2 on spot (3) and running again (4). Four deliveries, three runs;
// each attempt says why it began and ended, and costs its own seconds at
// its pool's price: 600 s × 1.0/h = 1/6, 540 s × 0.6/h = 0.09, and the
// running 600 s so far × 0.6/h = 0.1.
func TestBuildAttemptsTellsRunsFromDeliveries(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	m := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	j := jobs.Job{ID: "j1", State: jobs.StateRunning, Attempt: 4, Queue: "burst", Pool: "spot", Worker: "spot-2", StartedAt: m(21)}
	attempts := []usage.AttemptUsage{
		{JobID: "j1", Attempt: 2, Pool: "fixed", Worker: "fixed-1", Start: m(0), End: m(10), Slots: 1, Outcome: "preempted", Lost: 90 * time.Second},
		{JobID: "j1", Attempt: 3, Pool: "spot", Worker: "spot-1", Start: m(11), End: m(20), Slots: 1, Outcome: "retried"},
		{JobID: "other", Attempt: 3, Pool: "spot", Worker: "spot-1", Start: m(11), End: m(20), Slots: 1, Outcome: "failed"},
		usage.RunningUsage(j),
	}
	evs := []events.Event{
		{Type: events.TypeJobQueued, JobID: "j1", Attempt: 1, Queue: "burst"},
		{Type: events.TypeJobMoved, JobID: "j1", Attempt: 2, Queue: "loan", Reason: "lent to fixed capacity (rule 2: fixed has room)"},
		{Type: events.TypeJobRunning, JobID: "j1", Attempt: 2, Worker: "fixed-1"},
		{Type: events.TypeJobRequeued, JobID: "j1", Attempt: 3, Queue: "burst", Reason: "preempted: reclaim (rule 1: core work waits)"},
		{Type: events.TypeJobRequeued, JobID: "j1", Attempt: 4, Queue: "burst", Reason: "exited with code 2; retry 1 of 2"},
	}
	got := insight.BuildAttempts(j, attempts, evs, map[string]float64{"fixed": 1.0, "spot": 0.6}, m(31))
	if got.Runs != 3 || got.Deliveries != 4 || len(got.Attempts) != 4 {
		t.Fatalf("runs %d deliveries %d attempts %d, want 3, 4, 4", got.Runs, got.Deliveries, len(got.Attempts))
	}
	want := []struct {
		ran              bool
		pool, outcome    string
		began, reason    string
		cost, lost, secs float64
	}{
		{false, "", "moved", "submitted", "lent to fixed capacity", 0, 0, 0},
		{true, "fixed", "preempted", "moved: lent to fixed capacity", "preempted: reclaim", 1.0 / 6, 90, 600},
		{true, "spot", "retried", "requeued: preempted: reclaim", "exited with code 2", 0.09, 0, 540},
		{true, "spot", "running", "requeued: exited with code 2", "", 0.1, 0, 600},
	}
	for i, w := range want {
		a := got.Attempts[i]
		if a.Attempt != i+1 || a.Ran != w.ran || a.Pool != w.pool || a.Outcome != w.outcome || !strings.HasPrefix(a.Began, w.began) ||
			!strings.HasPrefix(a.Reason, w.reason) || math.Abs(a.Cost-w.cost) > 1e-9 || a.LostSeconds != w.lost || a.Seconds != w.secs {
			t.Errorf("attempt %d: %+v\nwant %+v", i+1, a, w)
		}
	}
	if math.Abs(got.Cost-(1.0/6+0.09+0.1)) > 1e-9 {
		t.Errorf("cost %v, want %v", got.Cost, 1.0/6+0.09+0.1)
	}
	// Without events every attempt is still listed, its reasons empty.
	bare := insight.BuildAttempts(j, attempts, nil, nil, m(31))
	if bare.Runs != 3 || len(bare.Attempts) != 4 || bare.Attempts[1].Began != "queued again (no event kept)" || bare.Attempts[0].Outcome != "moved" {
		t.Errorf("without events: %+v", bare)
	}
}
