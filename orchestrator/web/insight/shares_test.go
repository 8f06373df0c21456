package insight_test

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
)

// TestOverviewShares: the share bars count the team's jobs running on
// fixed workers only (not those on spot), and an owed team's wait from its
// oldest held or admitted core job; without shares there are none.
func TestOverviewShares(t *testing.T) {
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	sc := shares.Config{Teams: []shares.Team{{Name: "etl", Slots: 1, LendLimit: 1, BorrowLimit: 2}, {Name: "ml", Slots: 1, LendLimit: 1, BorrowLimit: 2}}}
	src := insight.Source{Pools: pools(), Quota: map[string]int{"onprem": 2}, Shares: sc}
	core := func(team string) jobs.Spec { return jobs.Spec{Team: team, Class: jobs.ClassCore} }
	in := insight.Inputs{
		Workers: []queues.WorkerInfo{{ID: "fixed-1", Pool: "onprem", Slots: 2}, {ID: "spot-1", Pool: "spot", Slots: 2}},
		Active: []jobs.Job{
			{ID: "A", State: jobs.StateRunning, Queue: "core", Worker: "fixed-1", StartedAt: ago(time.Hour), Spec: core("etl")},
			{ID: "B", State: jobs.StateRunning, Queue: "core", Worker: "fixed-1", StartedAt: ago(time.Hour), Spec: core("etl")},
			{ID: "C", State: jobs.StateRunning, Queue: "burst", Worker: "spot-1", StartedAt: ago(time.Hour), Spec: jobs.Spec{Team: "ml", Class: jobs.ClassBurst}},
			{ID: "D", State: jobs.StateQueued, Queue: "held", QueuedAt: ago(40 * time.Second), Spec: core("ml")},
			{ID: "E", State: jobs.StateQueued, Queue: "core", QueuedAt: ago(10 * time.Second), Spec: core("ml")},
		},
	}
	o := src.OverviewOf(now, in)
	if o.Shares == nil || o.Shares.Quota != 2 || len(o.Shares.Teams) != 2 {
		t.Fatalf("shares %+v", o.Shares)
	}
	etl, ml := o.Shares.Teams[0], o.Shares.Teams[1]
	if etl.Used != 2 || etl.Own != 1 || etl.OnLent != 1 {
		t.Errorf("etl %+v", etl)
	}
	if ml.Used != 0 || ml.Lent != 1 || ml.LentTo["etl"] != 1 || ml.Waiting != 2 || ml.OwnerWait != 40 {
		t.Errorf("ml %+v", ml)
	}
	src.Shares = shares.Config{}
	if o := src.OverviewOf(now, in); o.Shares != nil {
		t.Errorf("shares without a config: %+v", o.Shares)
	}
}
