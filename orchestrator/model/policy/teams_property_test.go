package policy

import (
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"pgregory.net/rapid"
)

// genShareSnapshot is genSnapshot with team shares on: two to four teams
// dividing part or all of the fixed slots, with random limits, weights
// and promises; jobs of those teams, of a team without a share and of
// none; graces; part of the queued core work held, some of it being
// admitted, and core loans being reclaimed.
func genShareSnapshot(t *rapid.T) Snapshot {
	s := genSnapshot(t)
	quota := 0
	kind := map[string]PoolKind{}
	for _, p := range s.Pools {
		kind[p.Name] = p.Kind
	}
	for _, w := range s.Workers {
		if kind[w.Pool] == PoolFixed {
			quota += w.Slots
		}
	}
	s.Config.Tick = time.Second
	left := quota
	var names []string
	for i := range rapid.IntRange(2, 4).Draw(t, "teams") {
		n := rapid.IntRange(0, left).Draw(t, "share")
		left -= n
		name := string(rune('A' + i))
		names = append(names, name)
		s.Config.Shares.Teams = append(s.Config.Shares.Teams, shares.Team{
			Name: name, Slots: n,
			LendLimit:     rapid.IntRange(0, n).Draw(t, "lend_limit"),
			BorrowLimit:   rapid.IntRange(0, quota).Draw(t, "borrow_limit"),
			Weight:        float64(rapid.IntRange(1, 3).Draw(t, "weight")),
			ReclaimWithin: rapid.SampledFrom([]time.Duration{2 * time.Second, 40 * time.Second, time.Minute}).Draw(t, "within"),
		})
	}
	if rapid.Bool().Draw(t, "rebalance") {
		s.Config.Shares.Rebalance = shares.Rebalance{Enabled: true,
			MinRun:        rapid.SampledFrom([]time.Duration{0, 10 * time.Minute}).Draw(t, "min_run"),
			DeadZone:      rapid.SampledFrom([]float64{0, 0.5, 2}).Draw(t, "dead_zone"),
			MaxPerAttempt: rapid.IntRange(1, 2).Draw(t, "max_per_attempt")}
	}
	names = append(names, "", "Z")
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.Team = rapid.SampledFrom(names).Draw(t, "team")
		j.Grace = rapid.SampledFrom([]time.Duration{0, 10 * time.Second, 30 * time.Second, 2 * time.Minute}).Draw(t, "grace")
		j.Rebalanced = rapid.IntRange(0, 2).Draw(t, "rebalanced")
		switch {
		case j.queued() && j.Class == jobs.ClassCore && j.Queue == QueueCore && j.PendingAction == "" && !j.waitsPlaced() &&
			rapid.IntRange(0, 2).Draw(t, "held") > 0:
			j.Queue = QueueHeld
			if rapid.IntRange(0, 4).Draw(t, "admitting") == 0 {
				j.PendingAction = Admit
			}
		case j.running() && j.Class == jobs.ClassCore && j.PendingAction == "" && kind[j.Pool] == PoolFixed &&
			rapid.IntRange(0, 5).Draw(t, "reclaiming") == 0:
			j.PendingAction = Reclaim
		}
	}
	// More held work than genSnapshot's few queued core jobs.
	for i := range rapid.IntRange(0, 8).Draw(t, "more_held") {
		j := queued(fmt.Sprintf("h%02d", i), jobs.ClassCore, QueueHeld, t0.Add(-time.Duration(rapid.IntRange(0, 60).Draw(t, "held_ago"))*time.Minute))
		j.Team = rapid.SampledFrom(names).Draw(t, "team")
		j.Checkpointable, j.Retryable = rapid.Bool().Draw(t, "checkpointable"), rapid.IntRange(0, 3).Draw(t, "retryable") > 0
		j.Grace = rapid.SampledFrom([]time.Duration{0, 30 * time.Second, 2 * time.Minute}).Draw(t, "grace")
		s.Jobs = append(s.Jobs, j)
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("the generator made an invalid snapshot: %v", err)
	}
	return s
}

// TestPropertyShares checks rule 9 over random snapshots: a plan is
// deterministic whatever the input order, idempotent once applied, the
// index kept by changes plans the same, and every use of the quota it
// plans keeps the shares (see checkShares).
func TestPropertyShares(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genShareSnapshot(t)
		p := Decide(s, t0)
		checkShares(t, s, p)
		shuffled := s
		shuffled.Workers = rapid.Permutation(s.Workers).Draw(t, "workers_order")
		shuffled.Jobs = rapid.Permutation(s.Jobs).Draw(t, "jobs_order")
		if other := Decide(shuffled, t0); !reflect.DeepEqual(p, other) {
			t.Fatalf("input order changed the plan:\n%s\n%s", p, other)
		}
		applied := Apply(s, p, t0)
		if err := applied.Validate(); err != nil {
			t.Fatalf("Apply made an invalid snapshot: %v\n%s", err, p)
		}
		if next := Decide(applied, t0); !next.Empty() {
			t.Fatalf("not idempotent: after\n%s\nthe next plan is\n%s", p, next)
		}
		ix := NewIndex(s.Config, s.Pools)
		for _, j := range rapid.Permutation(s.Jobs).Draw(t, "put_order") {
			ix.PutJob(j)
		}
		for _, w := range s.Workers {
			ix.PutWorker(w)
		}
		ix.SetLaunches(s.Launches)
		if err := ix.Check(); err != nil {
			t.Fatal(err)
		}
		if got := ix.Decide(t0); !reflect.DeepEqual(got, p) {
			t.Fatalf("the index kept by changes plans\n%s\nthe rebuild\n%s", got, p)
		}
	})
}

// TestPropertySharesTicks runs the harness with shares for a few ticks.
func TestPropertySharesTicks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(t, genShareSnapshot(t), 10*time.Second)
		for range 5 {
			before, now := w.s, w.now
			p := w.step()
			checkShares(t, before, p)
			if next := Decide(Apply(before, p, now), now); !next.Empty() {
				for _, j := range before.Jobs {
					t.Logf("job %+v", j)
				}
				for _, w := range before.Workers {
					t.Logf("worker %+v", w)
				}
				t.Logf("shares %+v", before.Config.Shares)
				t.Fatalf("not idempotent at %s: after\n%s\nthe next plan is\n%s", now, p, next)
			}
		}
	})
}

// checkShares recounts each team's use of the fixed quota from s, and
// walks p's actions in order: work that is not reclaimable may take
// fixed slots only while the team's work that is not reclaimable fits
// in its share (it is counted first, so only reclaimable work is ever
// above the share); a team that gains use ends within its borrow limit
// (or no further past it than it was); every reclaim stops a job of a
// team other than its owner whose running work passes its share (so its
// in-share work is never the victim); admissions move held core work.
func checkShares(t *rapid.T, s Snapshot, p Plan) {
	t.Helper()
	c := s.Config.Shares
	within := c.Teams[0].ReclaimWithin
	for _, tm := range c.Teams {
		within = min(within, tm.ReclaimWithin)
	}
	reclaimable := func(j Job) bool { return j.Checkpointable && j.Retryable && j.Grace+s.Config.Tick <= within }
	kind, up := map[string]PoolKind{}, map[string]bool{}
	for _, pl := range s.Pools {
		kind[pl.Name] = pl.Kind
	}
	for _, w := range s.Workers {
		up[w.ID] = kind[w.Pool] == PoolFixed && w.State == WorkerUp
	}
	job := map[string]Job{}
	used, running, fixed := map[string]int64{}, map[string]int64{}, map[string]int64{}
	count := func(j Job, d int64) {
		used[j.Team] += d * j.milliSlots()
		if !reclaimable(j) {
			fixed[j.Team] += d * j.milliSlots()
		}
	}
	for _, j := range s.Jobs {
		job[j.ID] = j
		d := j.destination()
		switch {
		case j.running() && up[j.Worker] && j.PendingAction == "":
			count(j, 1)
			running[j.Team] += j.milliSlots()
		case j.waitsPlaced() && (d == QueueCore || d == QueueLoan):
			count(j, 1)
		case (j.queued() || j.PendingAction == Migrate) && (d == QueueCore || d == QueueLoan):
			count(j, 1)
		}
	}
	before := maps.Clone(used)
	share := func(team string) int64 { tm, _ := c.Team(team); return int64(tm.Slots) * 1000 }
	for _, a := range p.Actions {
		fail := func(why string) { t.Fatalf("%s: %s\n%s", a, why, p) }
		j := job[a.Job]
		m := j.milliSlots()
		switch a.Kind {
		case Admit, Lend, Migrate:
			if a.Kind == Admit && (!j.queued() || j.Queue != QueueHeld || j.Class != jobs.ClassCore || a.Queue != QueueCore || a.Rule != 9) {
				fail("admission of a job that is not held core work")
			}
			if !reclaimable(j) && fixed[j.Team]+m > share(j.Team) {
				fail(fmt.Sprintf("work that is not reclaimable passes team %q's share", j.Team))
			}
			count(j, 1)
		case Reclaim:
			if a.Rule != 9 || a.Team != j.Team || (a.Owner != "" && a.Owner == j.Team) {
				fail("a reclaim under shares names rule 9 and the victim's team, for another team")
			}
			if running[j.Team] <= share(j.Team) {
				fail(fmt.Sprintf("team %q runs within its share, yet loses %s", j.Team, j.ID))
			}
			want := QueueBurst
			if j.Class == jobs.ClassCore {
				want = QueueHeld
			}
			if a.Queue != want {
				fail("reclaimed to the wrong queue")
			}
			count(j, -1)
			running[j.Team] -= m
		case Unlend:
			count(j, -1)
		case Overflow:
			if j.Queue == QueueCore {
				count(j, -1)
			}
		}
	}
	for team, u := range used {
		tm, has := c.Team(team)
		if !has || u <= before[team] {
			continue
		}
		if over := u - share(team); over > int64(tm.BorrowLimit)*1000 && over > before[team]-share(team) {
			t.Fatalf("team %q ends %d thousandths above its share, past its borrow limit %d\n%s", team, over, tm.BorrowLimit, p)
		}
	}
}
