package telemetry

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// TestShareMetrics: the share gauges report the last SetShares, and the
// share events, as decoded from the bus, count reclaims by rule and
// admissions by whose share.
func TestShareMetrics(t *testing.T) {
	m := newTest(t, Options{})
	m.SetShares([]TeamShare{
		{Team: "a", Share: 2, Own: 2, OnLent: 1.5, OnCommon: 0.5},
		{Team: "b", Share: 2, LentTo: map[string]float64{"a": 1.5}, Idle: 0.5, OwnerWait: 7},
	})
	now := time.Now()
	admit := events.Event{ID: "j1.2.job.moved", Type: events.TypeJobMoved, JobID: "j1", Attempt: 2, Queue: "core", Time: now,
		Data: events.Share{Action: "admit", Team: "b", Owner: "b", Rule: 9}.Data()}
	evs := []events.Event{admit,
		events.Reclaimed("j2", 1, "f1", events.Share{Team: "a", Owner: "b", Rule: 9}, "r", now),
		events.Reclaimed("j3", 1, "f1", events.Share{Team: "a", Owner: "b", Rule: 9}, "r", now)}
	for _, e := range evs {
		b, _ := json.Marshal(e)
		var decoded events.Event
		if err := json.Unmarshal(b, &decoded); err != nil {
			t.Fatal(err)
		}
		m.Observe(decoded)
	}
	fams := scrape(t, m)
	wantValue(t, fams, "ballast_share_slots", map[string]string{"team": "a"}, 2)
	wantValue(t, fams, "ballast_share_used", map[string]string{"team": "a", "where": "own"}, 2)
	wantValue(t, fams, "ballast_share_used", map[string]string{"team": "a", "where": "lent"}, 1.5)
	wantValue(t, fams, "ballast_share_used", map[string]string{"team": "a", "where": "common"}, 0.5)
	wantValue(t, fams, "ballast_share_lent", map[string]string{"team": "b", "to": "a"}, 1.5)
	wantValue(t, fams, "ballast_share_idle", map[string]string{"team": "b"}, 0.5)
	wantValue(t, fams, "ballast_share_owner_wait_seconds", map[string]string{"team": "b"}, 7)
	wantValue(t, fams, "ballast_share_reclaims_total", map[string]string{"team": "a", "owner": "b", "rule": "9"}, 2)
	wantValue(t, fams, "ballast_share_admissions_total", map[string]string{"team": "b", "owner": "b"}, 1)
	// Shares turned off: the gauges report no series.
	m.SetShares(nil)
	if f := scrape(t, m)["ballast_share_slots"]; f != nil && len(f.GetMetric()) > 0 {
		t.Errorf("share gauges after SetShares(nil): %v", f)
	}
}
