package insight_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestOverviewOfAFixedScene builds the overview of a scene whose every
// figure is worked out by hand in the comments.
func TestOverviewOfAFixedScene(t *testing.T) {
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	src := insight.Source{Pools: pools(), Quota: map[string]int{"onprem": 2}}
	in := insight.Inputs{
		Leader: "ctl-a",
		Workers: []queues.WorkerInfo{
			{ID: "fixed-1", Pool: "onprem", Slots: 2, Busy: 2, StartedAt: ago(2 * time.Hour)}, // heartbeat says 2, records say 1
			{ID: "spot-1", Pool: "spot", Slots: 2, StartedAt: ago(90 * time.Second)},
			{ID: "od-1", Pool: "ondemand", Slots: 1, Draining: true, StartedAt: ago(30 * time.Minute)},
		},
		Queues: []queues.QueueStats{{Queue: queues.QueueCore}, {Queue: queues.QueueBurst, Pending: 1, OldestPendingSeconds: 120}},
		Active: []jobs.Job{
			{ID: "A", State: jobs.StateRunning, Queue: "core", Pool: "onprem", Worker: "fixed-1", Attempt: 1,
				QueuedAt: ago(31 * time.Minute), StartedAt: ago(30 * time.Minute), Spec: jobs.Spec{Team: "etl", Template: "nightly", Class: jobs.ClassCore}},
			{ID: "B", State: jobs.StateRunning, Queue: "burst", Pool: "spot", Worker: "spot-1", Attempt: 2,
				QueuedAt: ago(4 * time.Minute), StartedAt: ago(time.Minute), Spec: jobs.Spec{Team: "ml", Template: "train", Class: jobs.ClassBurst}},
			{ID: "C", State: jobs.StateQueued, Queue: "burst", QueuedAt: ago(2 * time.Minute), Spec: jobs.Spec{Class: jobs.ClassBurst}},
		},
		Usage: []usage.AttemptUsage{
			// Written before templates were stamped: B is named by its other attempt.
			{JobID: "B", Attempt: 1, Team: "ml", Pool: "spot", Worker: "spot-0", Queued: ago(52 * time.Minute),
				Start: ago(50 * time.Minute), End: ago(45 * time.Minute), Outcome: "preempted", Lost: time.Minute},
			{JobID: "D", Attempt: 1, Team: "ml", Pool: "ondemand", Worker: "od-1", Queued: ago(30 * time.Minute),
				Start: ago(20 * time.Minute), End: ago(10 * time.Minute), Outcome: "succeeded"},
			{JobID: "E", Attempt: 1, Pool: "onprem", Worker: "fixed-1", Queued: ago(4 * time.Hour),
				Start: ago(4 * time.Hour), End: ago(3 * time.Hour), Outcome: "lost"},
			usage.RunningUsage(jobs.Job{ID: "B", Attempt: 2, Pool: "spot", Worker: "spot-1", QueuedAt: ago(4 * time.Minute),
				StartedAt: ago(time.Minute), Spec: jobs.Spec{Team: "ml", Template: "train", Class: jobs.ClassBurst}}),
			usage.RunningUsage(jobs.Job{ID: "A", Attempt: 1, Pool: "onprem", Worker: "fixed-1", QueuedAt: ago(31 * time.Minute),
				StartedAt: ago(30 * time.Minute), Spec: jobs.Spec{Team: "etl", Template: "nightly", Class: jobs.ClassCore}}),
		},
		Lives: []usage.WorkerLife{
			{ID: "spot-0", Pool: "spot", Slots: 2, Start: ago(55 * time.Minute), End: ago(45 * time.Minute)},
			{ID: "spot-1", Pool: "spot", Slots: 2, Start: ago(90 * time.Second)},
			{ID: "od-1", Pool: "ondemand", Slots: 1, Start: ago(30 * time.Minute)},
		},
		IdleSamples: []usage.Sample{{At: ago(30 * time.Minute), Value: 0.5}, {At: ago(10 * time.Minute), Value: 0}},
	}
	o := src.OverviewOf(now, in)
	if len(o.Problems) > 0 {
		t.Fatalf("problems: %v", o.Problems)
	}

	// Pools: busy from the job records; cost/h is the quota (2 x 1.0), the
	// spot worker (2 x 0.5) and the on-demand one (1 x 3.0).
	want := map[string]insight.PoolView{
		"onprem":   {Name: "onprem", Kind: "fixed", PricePerSlotHour: 1, Quota: 2, Busy: 1, Idle: 1, Workers: 1, CostPerHour: 2},
		"spot":     {Name: "spot", Kind: "spot", PricePerSlotHour: 0.5, Busy: 1, Idle: 1, Workers: 1, CostPerHour: 1},
		"ondemand": {Name: "ondemand", Kind: "ondemand", PricePerSlotHour: 3, Busy: 0, Idle: 1, Workers: 1, Draining: 1, CostPerHour: 3},
	}
	for _, p := range o.Pools {
		if p != want[p.Name] {
			t.Errorf("pool %s: got %+v, want %+v", p.Name, p, want[p.Name])
		}
	}
	// Billed so far: spot-1 90 s per second, 2 x 0.5 → 0.025; od-1 30 min
	// into a billed hour → 3.0; fixed workers are the quota's.
	billed := map[string]float64{"fixed-1": 0, "spot-1": 0.025, "od-1": 3}
	for _, w := range o.Workers {
		if !near(w.BilledCost, billed[w.ID]) {
			t.Errorf("worker %s billed %.6f, want %.6f", w.ID, w.BilledCost, billed[w.ID])
		}
	}
	if o.Workers[0].ID != "od-1" || o.Workers[1].ID != "fixed-1" || o.Workers[2].ID != "spot-1" {
		t.Errorf("workers not sorted by pool then ID: %+v", o.Workers)
	}
	if o.Workers[1].Busy != 1 || o.Workers[0].State != "draining" {
		t.Errorf("workers %+v", o.Workers)
	}
	// Running: A 30 min on the quota at 1.0; B 60 s on spot at 0.5.
	if len(o.Running) != 2 || o.Running[0].ID != "A" || !near(o.Running[0].Cost, 0.5) ||
		!near(o.Running[1].Cost, 0.5/60) || o.Running[1].WaitSeconds != 180 || o.Running[1].Pool != "spot" {
		t.Errorf("running %+v", o.Running)
	}
	for _, q := range o.Queues {
		if (q.Name == "burst" && (q.Pending != 1 || q.Running != 1)) || (q.Name == "core" && q.Running != 1) {
			t.Errorf("queue %+v", q)
		}
	}

	// Key measures over the last hour: elastic starts waited 2 min (B's
	// first attempt), 10 min (D) and 3 min (B now): p95 by nearest rank is
	// 10 min. One preemption in the hour; E's loss was 3 h ago. The quota
	// is half idle now, and its samples average 0.25.
	k := o.Key
	if k.ElasticStarts != 3 || k.ElasticWaitP95Seconds != 600 || k.Preemptions != 1 || k.PreemptionsByKind["preempted"] != 1 {
		t.Errorf("key %+v", k)
	}
	if k.FixedIdleNow == nil || *k.FixedIdleNow != 0.5 || k.FixedIdleMean == nil || *k.FixedIdleMean != 0.25 {
		t.Errorf("idle now %v mean %v", k.FixedIdleNow, k.FixedIdleMean)
	}
	// The series holds 6 h in 10-minute buckets (37 of them, the last one
	// open), both preemptions and all three starts.
	pre, starts := 0, 0
	for _, b := range k.Series {
		pre += b.Preemptions
		starts += b.ElasticStarts
	}
	if len(k.Series) != 37 || pre != 2 || starts != 3 {
		t.Errorf("series: %d buckets, %d preemptions, %d starts", len(k.Series), pre, starts)
	}

	// Today: the quota 12 h x 2 x 1.0 = 24; spot-0 10 min x 2 x 0.5, spot-1
	// 90 s x 2 x 0.5, od-1 30 min x 3 (billed to the hour, but the window
	// ends now).
	elastic := 10.0/60 + 1.5/60 + 1.5
	if !near(o.Cost.Fixed, 24) || !near(o.Cost.Elastic, elastic) || !near(o.Cost.Total, 24+elastic) {
		t.Errorf("cost %+v, want elastic %.6f", o.Cost, elastic)
	}
	teams := map[string]float64{}
	for _, tm := range o.Cost.Teams {
		teams[tm.Name] = tm.Cost
	}
	// ml: B 5 min + 1 min on spot at 0.5, D 10 min on-demand at 3; etl: A
	// 30 min on the quota; E (no team) 1 h on the quota.
	if !near(teams["ml"], 6.0/60*0.5+0.5) || !near(teams["etl"], 0.5) || !near(teams[insight.NoTeam], 1) {
		t.Errorf("teams %v", teams)
	}
}

// TestLedgerOfClipsAttemptsToTheirWorkersLives: stamps from different
// writes may disagree by a moment; what is left of an attempt inside its
// worker's life is priced, and what cannot be priced is named.
func TestLedgerOfClipsAttemptsToTheirWorkersLives(t *testing.T) {
	src := insight.Source{Pools: pools(), Quota: map[string]int{"onprem": 2}}
	lives := []usage.WorkerLife{
		{ID: "s1", Pool: "spot", Slots: 2, Start: at(10), End: at(40)},
		{ID: "s1", Pool: "spot", Slots: 2, Start: at(50)}, // the same ID restarted
	}
	attempts := []usage.AttemptUsage{
		{JobID: "a", Pool: "spot", Worker: "s1", Start: at(10).Add(-5 * time.Millisecond), End: at(20)},
		{JobID: "b", Pool: "spot", Worker: "s1", Start: at(30), End: at(45), Lost: 15 * time.Minute},
		{JobID: "c", Pool: "spot", Worker: "s1", Start: at(55)},
		{JobID: "d", Pool: "spot", Worker: "ghost", Start: at(15), End: at(20)},
		{JobID: "e", Pool: "gone-pool", Worker: "x", Start: at(15), End: at(20)},
	}
	l, problems := src.LedgerOf(at(0), at(60), time.Time{}, attempts, lives)
	if len(l.Workers) != 2 || l.Workers[0].ID == l.Workers[1].ID {
		t.Fatalf("lives of one ID must stay apart: %+v", l.Workers)
	}
	if len(l.Usage) != 3 {
		t.Fatalf("usage %+v", l.Usage)
	}
	a, b, c := l.Usage[0], l.Usage[1], l.Usage[2]
	if !a.Start.Equal(at(10)) || !b.End.Equal(at(40)) || b.LostWork != 10*time.Minute || !c.End.IsZero() {
		t.Errorf("clipping: a %+v b %+v c %+v", a, b, c)
	}
	if len(problems) != 2 || !strings.Contains(problems[0], "not configured") || !strings.Contains(problems[1], "no life record") {
		t.Errorf("problems %q", problems)
	}
	if len(l.Quotas) != 1 || l.Quotas[0].Slots != 2 {
		t.Errorf("quotas %+v", l.Quotas)
	}
}

// TestAnOverbookedQuotaIsPricedAtItsPeakAndNamed: fixed workers holding
// more slots than the quota must not make the whole day unpriceable.
func TestAnOverbookedQuotaIsPricedAtItsPeakAndNamed(t *testing.T) {
	src := insight.Source{Pools: pools(), Quota: map[string]int{"onprem": 2}}
	var attempts []usage.AttemptUsage
	for i, span := range [][2]int{{0, 30}, {10, 40}, {20, 50}, {100, 110}} { // three at once from 20 to 30
		attempts = append(attempts, usage.AttemptUsage{JobID: string(rune('a' + i)), Pool: "onprem", Worker: "fixed-1",
			Start: at(span[0]), End: at(span[1])})
	}
	l, problems := src.LedgerOf(at(0), at(60), time.Time{}, attempts, nil)
	if len(problems) != 1 || !strings.Contains(problems[0], "held 3 slots at once, more than its quota of 2") || l.Quotas[0].Slots != 3 {
		t.Fatalf("problems %q quotas %+v", problems, l.Quotas)
	}
	// The 4th attempt is outside [0, 60): a peak there does not count.
	if _, problems := src.LedgerOf(at(60), at(120), time.Time{}, attempts, nil); len(problems) != 0 {
		t.Fatalf("a later window: %q", problems)
	}
	o := src.OverviewOf(at(60), insight.Inputs{Usage: attempts})
	for _, p := range o.Problems {
		if strings.Contains(p, "today's cost") {
			t.Fatalf("the day was refused: %q", o.Problems)
		}
	}
}

// TestOverviewShowsOverflowedWork: core work that rule 7 sent to on-demand is
// counted, queued or running, and marked in the running-jobs table; core work
// on the quota and burst work on on-demand are not.
func TestOverviewShowsOverflowedWork(t *testing.T) {
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	core, burst := jobs.Spec{Class: jobs.ClassCore}, jobs.Spec{Class: jobs.ClassBurst}
	in := insight.Inputs{
		Workers: []queues.WorkerInfo{{ID: "od-1", Pool: "ondemand", Slots: 1, StartedAt: now.Add(-time.Hour)},
			{ID: "fixed-1", Pool: "onprem", Slots: 2, StartedAt: now.Add(-time.Hour)}},
		Active: []jobs.Job{
			{ID: "over-run", State: jobs.StateRunning, Queue: "overflow", Pool: "ondemand", Worker: "od-1", Spec: core, StartedAt: now.Add(-time.Minute)},
			{ID: "over-wait", State: jobs.StateQueued, Queue: "overflow@eu", Spec: core},
			{ID: "home", State: jobs.StateRunning, Queue: "core", Pool: "onprem", Worker: "fixed-1", Spec: core, StartedAt: now.Add(-time.Minute)},
			{ID: "od-burst", State: jobs.StateRunning, Queue: "ondemand", Pool: "onprem", Worker: "fixed-1", Spec: burst, StartedAt: now.Add(-time.Minute)},
		},
	}
	o := insight.Source{Pools: pools(), Quota: map[string]int{"onprem": 2}}.OverviewOf(now, in)
	if o.Overflowed != 2 {
		t.Errorf("overflowed %d, want 2 (one running, one queued)", o.Overflowed)
	}
	for _, r := range o.Running {
		if r.Overflowed != (r.ID == "over-run") {
			t.Errorf("running job %s marked overflowed %v", r.ID, r.Overflowed)
		}
	}
}
