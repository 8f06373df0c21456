package policy

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"pgregory.net/rapid"
)

// TestPropertyPlans checks every invariant of a single plan over random
// snapshots (see checkSound: known references, one move per job, no
// double-booking of fixed slots, core never towards spot, nothing migrated
// or drained outside the cool regime), that the plan does not depend on
// input order, that rule 1 leaves no core job behind borrowed burst once
// applied, and that it is idempotent: with its moves in flight, the next
// plan is empty. That last check is also the no-thrash property: a
// snapshot between the watermarks gets rule 2's lends once, and nothing
// the second time.
func TestPropertyPlans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t)
		p := Decide(s, t0)
		checkSound(t, s, p)

		if again := Decide(s, t0); !reflect.DeepEqual(p, again) {
			t.Fatalf("same input, different plans:\n%s\n%s", p, again)
		}
		shuffled := s
		shuffled.Pools = rapid.Permutation(s.Pools).Draw(t, "pools_order")
		shuffled.Workers = rapid.Permutation(s.Workers).Draw(t, "workers_order")
		shuffled.Jobs = rapid.Permutation(s.Jobs).Draw(t, "jobs_order")
		shuffled.Launches = rapid.Permutation(s.Launches).Draw(t, "launches_order")
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
		checkCoreNotBehindBorrowed(t, applied)
	})
}

// TestPropertyTicks runs the harness over random snapshots for a few ticks,
// checking every plan on the way.
func TestPropertyTicks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(t, genSnapshot(t), 30*time.Second)
		for range 6 {
			before := w.s
			now := w.now
			p := w.step()
			checkSound(t, before, p)
			if next := Decide(Apply(before, p, now), now); !next.Empty() {
				t.Fatalf("not idempotent at %s: after\n%s\nthe next plan is\n%s", now, p, next)
			}
		}
	})
}

// checkSound asserts what must hold of any plan for s.
func checkSound(t *rapid.T, s Snapshot, p Plan) {
	t.Helper()
	job := map[string]Job{}
	for _, j := range s.Jobs {
		job[j.ID] = j
	}
	worker := map[string]Worker{}
	for _, w := range s.Workers {
		worker[w.ID] = w
	}
	pool := map[string]Pool{}
	for _, pl := range s.Pools {
		pool[pl.Name] = pl
	}
	jobsOn := map[string]int{}
	for _, j := range s.Jobs {
		if j.running() {
			jobsOn[j.Worker]++
		}
	}
	load := Load(s)
	moved := map[string]bool{}
	// repacked counts, by worker, the jobs rule 5 moves off it.
	repacked := map[string]int{}
	// Lends and migrations go to the loan queue (core migrations to the
	// core queue), where shares pack with the shares already there: count
	// them as the next tick will.
	var lent, lentCore slotCount
	for _, a := range p.Actions {
		fail := func(why string) { t.Fatalf("%s: %s\n%s", a, why, p) }
		if a.Reason == "" || a.Rule < 1 || a.Rule > 7 {
			fail("no rule or reason")
		}
		if a.moves() {
			j, ok := job[a.Job]
			switch {
			case !ok:
				fail("unknown job")
			case moved[a.Job]:
				fail("job moved twice in one plan")
			case j.PendingAction != "":
				fail("job already has a move in flight")
			}
			moved[a.Job] = true
		}
		j, w := job[a.Job], worker[a.Worker]
		switch a.Kind {
		case Lend:
			lent.add(&j)
			if !j.queued() || j.Class != jobs.ClassBurst || j.Queue != QueueBurst || a.Queue != QueueLoan {
				fail("lend of a job that is not queued burst work in burst")
			}
		case Unlend:
			if !j.queued() || j.Queue != QueueLoan || a.Queue != QueueBurst {
				fail("unlend of a job that is not queued in loan")
			}
		case Reclaim:
			if !j.running() || j.Class != jobs.ClassBurst || j.Worker != a.Worker || pool[w.Pool].Kind != PoolFixed || a.Queue != QueueBurst {
				fail("reclaim of a job that is not borrowing a fixed slot")
			}
		case Repack:
			// On a worker of one slot only a GPU share moves: a whole job
			// fills it, more than half its slots.
			if !j.running() || !j.Checkpointable || j.Class != jobs.ClassBurst || j.sized() || j.Worker != a.Worker ||
				!pool[w.Pool].Kind.Elastic() || pool[w.Pool].SlotsPerWorker < 2 && j.Share == 0 || a.Queue != QueueBurst || a.Rule != 5 {
				fail("repack of a job that is not one-slot checkpointable burst work on a worker of several slots, or a share")
			}
			repacked[a.Worker]++
		case Migrate:
			if j.Class == jobs.ClassCore {
				lentCore.add(&j)
			} else {
				lent.add(&j)
			}
			want := map[jobs.Class]Queue{jobs.ClassCore: QueueCore, jobs.ClassBurst: QueueLoan}[j.Class]
			if !j.running() || !j.Checkpointable || j.Worker != a.Worker || !pool[w.Pool].Kind.Elastic() || a.Queue != want {
				fail("migration of a job that is not checkpointable elastic work, or to the wrong queue")
			}
		case Overflow:
			if !j.queued() || j.Class != jobs.ClassCore || pool[a.Pool].Kind != PoolOnDemand || !j.fitsRegion(pool[a.Pool].Region) {
				fail("overflow of a job that is not queued core work, or to a pool that is not on-demand in its region")
			}
		case Rehome:
			to := j.home(s.Config.MaxSpotPreemptions)
			if !j.queued() || j.Class != jobs.ClassBurst || j.Queue != QueueBurst || a.Queue != QueueBurst || !j.Home.Known ||
				a.Home != to || a.Home == j.Home {
				fail(fmt.Sprintf("rehome of a job that is not queued burst work in its wrong elastic queue (%s), or to %s, not %s", j.Home, a.Home, to))
			}
			if j.Home.OnDemand && !a.Home.OnDemand {
				fail("rehome sends a job that was off spot back to it")
			}
		case ScaleUp:
			pl, ok := pool[a.Pool]
			if !ok || !pl.Kind.Elastic() || a.Count <= 0 {
				fail("scale-up of an unknown or fixed pool, or of nothing")
			}
			supply, draining := 0, 0
			for _, w := range s.Workers {
				if w.Pool == a.Pool && w.active() {
					supply++
				} else if w.Pool == a.Pool && w.State == WorkerDraining && (w.Busy > 0 || jobsOn[w.ID] > 0) {
					draining++ // an empty draining worker is released in the same plan
				}
			}
			for _, l := range s.Launches {
				if l.Pool == a.Pool {
					supply += l.Count
				}
			}
			if supply+a.Count > pl.MaxWorkers-draining {
				fail(fmt.Sprintf("grows the pool past its maximum: %d + %d > %d - %d draining", supply, a.Count, pl.MaxWorkers, draining))
			}
		case Drain:
			if _, ok := worker[a.Worker]; !ok || !pool[w.Pool].Kind.Elastic() || w.State != WorkerUp {
				fail("drain of an unknown, fixed or not-up worker")
			}
		case Release:
			if _, ok := worker[a.Worker]; !ok || !pool[w.Pool].Kind.Elastic() || w.Busy != 0 || jobsOn[w.ID] != 0 || w.State == WorkerStarting {
				fail("release of an unknown, fixed, starting or busy worker")
			}
		default:
			fail("unknown kind")
		}
	}
	ix := IndexOf(s)
	taken := ix.loanCount().plus(lent).slots() - load.Loans + ix.coreCount().plus(lentCore).slots() - load.QueuedCore
	if taken > max(load.Free(), 0) {
		t.Fatalf("lends and migrations take %d fixed slots, %d are free\n%s", taken, load.Free(), p)
	}
	ceiling := int(math.Floor(s.Config.High*float64(load.Slots) + 1e-9))
	if (lent != slotCount{} || lentCore != slotCount{}) && load.Busy+load.QueuedCore+load.Loans+taken > ceiling {
		t.Fatalf("plan commits %d+%d+%d+%d fixed slots, more than high allows (%d)\n%s",
			load.Busy, load.QueuedCore, load.Loans, taken, ceiling, p)
	}
	// A repack (rule 5) drains at any utilization, but only a worker all
	// of whose jobs it moves; rule 4's drains wait for low.
	for _, a := range p.Actions {
		switch {
		case a.Kind == Drain && a.Rule == 5 && (repacked[a.Worker] == 0 || repacked[a.Worker] != jobsOn[a.Worker]):
			t.Fatalf("%s: rule 5 drains a worker it does not empty (%d of %d jobs repacked)\n%s", a, repacked[a.Worker], jobsOn[a.Worker], p)
		case a.Kind == Repack && !slices.ContainsFunc(p.Actions, func(d Action) bool { return d.Kind == Drain && d.Worker == a.Worker && d.Rule == 5 }):
			t.Fatalf("%s: repacked off a worker the plan does not drain\n%s", a, p)
		}
	}
	if u := load.Committed(); u >= s.Config.Low && (p.Count(Migrate) > 0 || countRule(p, Drain, 4) > 0) {
		t.Fatalf("utilization %.2f is not below low %.2f, yet the plan migrates or drains\n%s", u, s.Config.Low, p)
	}
}

// countRule counts the plan's actions of kind k made by rule.
func countRule(p Plan, k ActionKind, rule int) int {
	n := 0
	for _, a := range p.Actions {
		if a.Kind == k && a.Rule == rule {
			n++
		}
	}
	return n
}

// checkCoreNotBehindBorrowed asserts rule 1 after a plan is applied: if core
// work cannot start, no burst job borrows a fixed slot without being reclaimed.
func checkCoreNotBehindBorrowed(t *rapid.T, s Snapshot) {
	t.Helper()
	load := Load(s)
	fixedUp := map[string]bool{}
	for _, w := range s.Workers {
		for _, p := range s.Pools {
			if p.Name == w.Pool && p.Kind == PoolFixed && w.State == WorkerUp {
				fixedUp[w.ID] = true
			}
		}
	}
	reclaiming, borrowed := 0, 0
	for _, j := range s.Jobs {
		if !j.running() || !fixedUp[j.Worker] || j.Class != jobs.ClassBurst {
			continue
		}
		if j.PendingAction == Reclaim {
			reclaiming++
		} else if j.PendingAction == "" {
			borrowed++
		}
	}
	if short := load.QueuedCore - load.Free() - reclaiming; short > 0 && borrowed > 0 {
		t.Fatalf("%d core jobs cannot start while %d burst jobs borrow fixed slots", short, borrowed)
	}
}
