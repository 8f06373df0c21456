package policy

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"pgregory.net/rapid"
)

// team is a share of n slots that lends all of it, may borrow the
// quota (shareSnap sets it), weighs 1 and is owed its share back within
// a minute.
func team(name string, n int) shares.Team {
	return shares.Team{Name: name, Slots: n, LendLimit: n, BorrowLimit: -1, Weight: 1, ReclaimWithin: time.Minute}
}

// shareSnap is a snapshot of fixed workers of 4 slots each (n of them)
// with the shares on and a tick of one second.
func shareSnap(n int, teams []shares.Team, js ...Job) Snapshot {
	var ws []Worker
	for i := range n {
		ws = append(ws, worker(fmt.Sprintf("f%d", i+1), "fx", 4, 0))
	}
	s := snap([]Pool{fixedPool("fx", "eu"), elasticPool("od", PoolOnDemand, "eu", 2)}, ws, js...)
	teams = slices.Clone(teams)
	for i := range teams {
		if teams[i].BorrowLimit < 0 {
			teams[i].BorrowLimit = 4 * n
		}
	}
	s.Config.Shares = shares.Config{Teams: teams}
	s.Config.Tick = time.Second
	return s
}

// held is a reclaimable core job of team waiting in held since at.
func held(id, team string, at time.Time) Job {
	j := queued(id, jobs.ClassCore, QueueHeld, at)
	j.Team, j.Checkpointable, j.Retryable, j.Grace = team, true, true, 30*time.Second
	return j
}

// onFixed is a reclaimable core job of team running on worker w since
// started, with a checkpoint at ckpt.
func onFixed(id, team string, w string, started, ckpt time.Time) Job {
	return Job{ID: id, Class: jobs.ClassCore, State: jobs.StateRunning, Queue: QueueCore, Worker: w, Pool: "fx",
		Checkpointable: true, Retryable: true, Grace: 30 * time.Second, Team: team,
		SubmittedAt: started, QueuedAt: started, StartedAt: started, LastCheckpointAt: ckpt}
}

// kinds lists the actions of kind k as "job[team>owner]" in plan order.
func kinds(p Plan, k ActionKind) []string {
	var out []string
	for _, a := range p.Actions {
		if a.Kind == k {
			out = append(out, fmt.Sprintf("%s[%s>%s]", a.Job, a.Team, a.Owner))
		}
	}
	return out
}

func wantList(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

// stepScenario is the issue's: 16 fixed slots, shares A 8, B 4, C 4; A
// runs 16 reclaimable jobs, the oldest 8 within its share. The loans'
// checkpoints make a09, a11, a13, a15 the cheapest to stop, and A's
// in-share jobs cheaper still, so a victim choice that ignored the
// attribution would take them.
func stepScenario() Snapshot {
	var js []Job
	lost := []time.Duration{1, 5, 2, 6, 3, 7, 4, 8}
	for i := range 16 {
		started := ago(2*time.Hour - time.Duration(i)*time.Second)
		ckpt := ago(10 * time.Second)
		if i >= 8 {
			ckpt = ago(lost[i-8] * time.Minute)
		}
		js = append(js, onFixed(fmt.Sprintf("a%02d", i+1), "A", fmt.Sprintf("f%d", i/4+1), started, ckpt))
	}
	return shareSnap(4, []shares.Team{team("A", 8), team("B", 4), team("C", 4)}, js...)
}

func TestSharesStepScenario(t *testing.T) {
	w := newWorld(t, stepScenario(), time.Second)
	for i := range 4 {
		w.submit(held(fmt.Sprintf("b%d", i+1), "B", w.now), 0)
	}
	p := w.step()
	wantList(t, "B's admissions", kinds(p, Admit), "b1[B>B]", "b2[B>B]", "b3[B>B]", "b4[B>B]")
	wantList(t, "reclaims for B", kinds(p, Reclaim), "a09[A>B]", "a11[A>B]", "a13[A>B]", "a15[A>B]")
	for _, a := range p.Actions {
		if a.Kind == Reclaim && (a.Rule != 9 || a.Queue != QueueHeld || a.Rebalance || !strings.Contains(a.Reason, `team "B"`)) {
			t.Errorf("reclaim %v: want rule 9 to held for B", a)
		}
	}
	for _, id := range []string{"b1", "b2", "b3", "b4"} {
		if j := w.job(id); !j.running() {
			t.Errorf("%s is %s in %s after the reclaims landed, want running", id, j.State, j.Queue)
		}
	}
	if p := w.step(); !p.Empty() {
		t.Errorf("A's reclaimed loans must wait in held (no lendable room): %s", p)
	}
	for i := range 4 {
		w.submit(held(fmt.Sprintf("c%d", i+1), "C", w.now), 0)
	}
	p = w.step()
	wantList(t, "C's admissions", kinds(p, Admit), "c1[C>C]", "c2[C>C]", "c3[C>C]", "c4[C>C]")
	wantList(t, "reclaims for C", kinds(p, Reclaim), "a10[A>C]", "a12[A>C]", "a14[A>C]", "a16[A>C]")
	for i := range 8 {
		if j := w.job(fmt.Sprintf("a%02d", i+1)); !j.running() || j.Queue != QueueCore {
			t.Errorf("in-share %s was moved: %s in %s", j.ID, j.State, j.Queue)
		}
	}
	if p := w.step(); !p.Empty() {
		t.Errorf("nothing is left to do: %s", p)
	}
	if n := len(slices.Collect(func(yield func(Job) bool) {
		for _, j := range w.s.Jobs {
			if j.Queue == QueueHeld && j.queued() && j.Readmitted && !yield(j) {
				return
			}
		}
	})); n != 8 {
		t.Errorf("%d of A's loans wait readmitted in held, want 8", n)
	}
}

// TestSharesIdempotent checks that a plan in flight is not planned again:
// the admissions count in B's use, the reclaims as freeing B's slots.
func TestSharesIdempotent(t *testing.T) {
	s := stepScenario()
	for i := range 4 {
		s.Jobs = append(s.Jobs, held(fmt.Sprintf("b%d", i+1), "B", t0))
	}
	mustValid(t, s)
	p := Decide(s, t0)
	if p.Count(Reclaim) != 4 || p.Count(Admit) != 4 {
		t.Fatalf("want 4 admissions and 4 reclaims:\n%s", p)
	}
	s2 := Apply(s, p, t0)
	mustValid(t, s2)
	if p2 := Decide(s2, t0.Add(time.Second)); !p2.Empty() {
		t.Errorf("plan in flight is planned again:\n%s", p2)
	}
	// Two of the reclaims landed (their jobs are held), two are still in
	// flight, and C arrives: exactly C's 4 more are reclaimed.
	landed := 0
	for i := range s2.Jobs {
		j := &s2.Jobs[i]
		if j.PendingAction == Reclaim && landed < 2 {
			j.State, j.Queue, j.Worker, j.Pool, j.PendingAction, j.Readmitted = jobs.StateQueued, QueueHeld, "", "", "", true
			landed++
		}
	}
	for i := range 4 {
		s2.Jobs = append(s2.Jobs, held(fmt.Sprintf("c%d", i+1), "C", t0.Add(time.Second)))
	}
	s2 = fixBusyExact(s2)
	mustValid(t, s2)
	p3 := Decide(s2, t0.Add(time.Second))
	wantList(t, "reclaims for C", kinds(p3, Reclaim), "a10[A>C]", "a12[A>C]", "a14[A>C]", "a16[A>C]")
	wantList(t, "admissions", kinds(p3, Admit), "c1[C>C]", "c2[C>C]", "c3[C>C]", "c4[C>C]")
}

// fixBusyExact sets each worker's Busy to its running job records.
func fixBusyExact(s Snapshot) Snapshot {
	s.Workers = slices.Clone(s.Workers)
	for i := range s.Workers {
		s.Workers[i].Busy = 0
	}
	return fixBusy(s)
}

func TestSharesAdmission(t *testing.T) {
	// 8 slots, A 4 and B 4. A runs 2; B runs 1.
	base := func(extra ...Job) Snapshot {
		js := []Job{
			onFixed("a1", "A", "f1", ago(time.Hour), time.Time{}),
			onFixed("a2", "A", "f1", ago(time.Hour), time.Time{}),
			onFixed("b1", "B", "f2", ago(time.Hour), time.Time{}),
		}
		return shareSnap(2, []shares.Team{team("A", 4), team("B", 4)}, append(js, extra...)...)
	}
	ah := func(i int) Job { return held(fmt.Sprintf("h%d", i), "A", ago(time.Duration(10-i)*time.Minute)) }

	t.Run("in-share first, then loans into B's idle share", func(t *testing.T) {
		s := base(ah(1), ah(2), ah(3), ah(4), ah(5), ah(6))
		mustValid(t, s)
		p := Decide(s, t0)
		// 2 in share; B's idle 3 slots are lendable, 3 free slots after
		// the 2 in-share admissions: 3 loans.
		wantList(t, "admissions", kinds(p, Admit), "h1[A>A]", "h2[A>A]", "h3[A>]", "h4[A>]", "h5[A>]")
	})
	t.Run("in-share work is admitted with no free slot", func(t *testing.T) {
		s := base(ah(1))
		s.Workers[0].Busy, s.Workers[1].Busy = 4, 4 // unnamed work fills both
		mustValid(t, s)
		wantList(t, "admissions", kinds(Decide(s, t0), Admit), "h1[A>A]")
	})
	t.Run("non-reclaimable work is never admitted above its share", func(t *testing.T) {
		var js []Job
		for i := range 5 {
			j := ah(i + 1)
			switch i {
			case 2:
				j.Checkpointable = false
			case 3:
				j.Grace = time.Minute // 1m + 1s tick > reclaim_within
			case 4:
				j.Retryable = false
			}
			js = append(js, j)
		}
		p := Decide(mustValidSnap(t, base(js...)), t0)
		wantList(t, "admissions", kinds(p, Admit), "h1[A>A]", "h2[A>A]")
	})
	t.Run("a non-reclaimable job within its share is admitted", func(t *testing.T) {
		j := ah(1)
		j.Checkpointable = false
		wantList(t, "admissions", kinds(Decide(mustValidSnap(t, base(j)), t0), Admit), "h1[A>A]")
	})
	t.Run("lend_limit caps what B lends", func(t *testing.T) {
		s := base(ah(1), ah(2), ah(3), ah(4), ah(5))
		s.Config.Shares.Teams[1].LendLimit = 1
		p := Decide(mustValidSnap(t, s), t0)
		wantList(t, "admissions", kinds(p, Admit), "h1[A>A]", "h2[A>A]", "h3[A>]")
	})
	t.Run("borrow_limit caps what A borrows", func(t *testing.T) {
		s := base(ah(1), ah(2), ah(3), ah(4), ah(5))
		s.Config.Shares.Teams[0].BorrowLimit = 2
		p := Decide(mustValidSnap(t, s), t0)
		wantList(t, "admissions", kinds(p, Admit), "h1[A>A]", "h2[A>A]", "h3[A>]", "h4[A>]")
	})
	t.Run("no loan while an owner's work waits", func(t *testing.T) {
		// B's 3 held jobs take its idle share: nothing is left to lend.
		bh := func(i int) Job { return held(fmt.Sprintf("g%d", i), "B", ago(time.Hour)) }
		p := Decide(mustValidSnap(t, base(ah(1), ah(2), ah(3), bh(1), bh(2), bh(3))), t0)
		wantList(t, "admissions", kinds(p, Admit), "g1[B>B]", "g2[B>B]", "g3[B>B]", "h1[A>A]", "h2[A>A]")
	})
	t.Run("a team without a share borrows common slots only", func(t *testing.T) {
		s := base(held("x1", "", t0), held("x2", "", t0))
		s.Config.Shares.Teams = []shares.Team{team("A", 3), team("B", 4)}
		s.Config.Shares.Teams[0].LendLimit, s.Config.Shares.Teams[1].LendLimit = 0, 0
		s.Config.Shares.Teams[0].BorrowLimit, s.Config.Shares.Teams[1].BorrowLimit = 8, 8
		// 1 common slot; A's and B's idle lend nothing.
		wantList(t, "admissions", kinds(Decide(mustValidSnap(t, s), t0), Admit), "x1[>]")
	})
}

func mustValidSnap(t *testing.T, s Snapshot) Snapshot {
	t.Helper()
	mustValid(t, s)
	return s
}

func TestSharesFairOrder(t *testing.T) {
	// 12 slots, A 4, B 4, C 4 (idle, lends 4). A already borrows 2 (runs
	// 6), B none (runs 4): the 2 slots C has left go to B first.
	var js []Job
	for i := range 6 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", fmt.Sprintf("f%d", i/4+1), ago(time.Hour), time.Time{}))
	}
	for i := range 4 {
		js = append(js, onFixed(fmt.Sprintf("b%d", i), "B", "f3", ago(time.Hour), time.Time{}))
	}
	js = append(js, held("ha1", "A", ago(3*time.Minute)), held("ha2", "A", ago(3*time.Minute)),
		held("hb1", "B", ago(time.Minute)), held("hb2", "B", ago(time.Minute)), held("hb3", "B", ago(time.Minute)))
	s := shareSnap(3, []shares.Team{team("A", 4), team("B", 4), team("C", 4)}, js...)
	// f2 has 2 slots of A and 2 free; f3 4 of B; so 2 free in all.
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "admissions", kinds(p, Admit), "hb1[B>]", "hb2[B>]")

	t.Run("weight", func(t *testing.T) {
		s := s
		s.Config.Shares.Teams = slices.Clone(s.Config.Shares.Teams)
		s.Config.Shares.Teams[0].Weight = 4 // A's 2 borrowed weigh 0.5
		p := Decide(mustValidSnap(t, s), t0)
		// B 0 < A 0.5: B; then B 1 > A 0.5: A.
		wantList(t, "admissions", kinds(p, Admit), "hb1[B>]", "ha1[A>]")
	})
	t.Run("decayed usage breaks ties", func(t *testing.T) {
		// A runs 4 (borrows none): A and B tie; B used more lately.
		s := s
		s.Jobs = slices.DeleteFunc(slices.Clone(s.Jobs), func(j Job) bool { return j.ID == "a4" || j.ID == "a5" })
		s = fixBusyExact(s)
		s.Config.Shares.Teams = slices.Clone(s.Config.Shares.Teams)
		s.Config.Shares.Teams[2].LendLimit = 1
		s.TeamUsage = map[string]float64{"A": 100, "B": 200}
		wantList(t, "admissions", kinds(Decide(mustValidSnap(t, s), t0), Admit), "ha1[A>]")
		s.TeamUsage = map[string]float64{"A": 300, "B": 200}
		wantList(t, "admissions", kinds(Decide(mustValidSnap(t, s), t0), Admit), "hb1[B>]")
	})
}

func TestSharesGangReclaimedWhole(t *testing.T) {
	// 8 slots, A 4, B 4. A runs 4 one-slot jobs within its share on f1
	// and a gang of 2 x 2 slots on f2, started later: a loan.
	js := []Job{}
	for i := range 4 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", "f1", ago(2*time.Hour), ago(time.Second)))
	}
	g := onFixed("g", "A", "f2", ago(time.Hour), ago(time.Hour))
	g.Slots, g.Replicas, g.Placed = 2, 2, []string{"f2", "f2"}
	js = append(js, g, held("b1", "B", t0))
	s := shareSnap(2, []shares.Team{team("A", 4), team("B", 4)}, js...)
	s.Workers[1].Busy = 4
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "reclaims", kinds(p, Reclaim), "g[A>B]")
	wantList(t, "admissions", kinds(p, Admit), "b1[B>B]")
	// In flight, the gang frees all 4 slots: a second owner job of B's
	// takes one of them and reclaims nothing.
	s2 := Apply(s, p, t0)
	s2.Jobs = append(s2.Jobs, held("b2", "B", t0))
	p2 := Decide(mustValidSnap(t, s2), t0)
	wantList(t, "reclaims", kinds(p2, Reclaim))
	wantList(t, "admissions", kinds(p2, Admit), "b2[B>B]")
}

func TestSharesRebalance(t *testing.T) {
	// 12 slots: L 4 lends all (idle), X and Y 4 each. X runs 8 (borrows
	// L's 4), Y runs 4 and has 3 held reclaimable jobs: no room is left.
	mk := func(r shares.Rebalance) Snapshot {
		var js []Job
		for i := range 8 {
			js = append(js, onFixed(fmt.Sprintf("x%d", i), "X", fmt.Sprintf("f%d", i/4+1), ago(2*time.Hour+time.Duration(i)*time.Minute), ago(time.Duration(i+1)*time.Minute)))
		}
		for i := range 4 {
			js = append(js, onFixed(fmt.Sprintf("y%d", i), "Y", "f3", ago(time.Hour), time.Time{}))
		}
		for i := range 3 {
			js = append(js, held(fmt.Sprintf("hy%d", i), "Y", ago(time.Minute)))
		}
		s := shareSnap(3, []shares.Team{team("L", 4), team("X", 4), team("Y", 4)}, js...)
		s.Config.Shares.Rebalance = r
		return s
	}
	on := shares.Rebalance{Enabled: true, MinRun: 10 * time.Minute, DeadZone: 0.5, MaxPerAttempt: 2}

	if p := Decide(mustValidSnap(t, mk(shares.Rebalance{})), t0); !p.Empty() {
		t.Errorf("rebalancing off moves nothing:\n%s", p)
	}
	s := mk(on)
	p := Decide(mustValidSnap(t, s), t0)
	// X's attributed loans are its 4 newest starts (x0..x3, started
	// latest); least lost work first: x0, then x1. After two moves X and
	// Y both borrow 2: a third would leave Y above X.
	wantList(t, "reclaims", kinds(p, Reclaim), "x0[X>Y]", "x1[X>Y]")
	wantList(t, "admissions", kinds(p, Admit), "hy0[Y>]", "hy1[Y>]")
	for _, a := range p.Actions {
		if a.Kind == Reclaim && (!a.Rebalance || a.Rule != 9) {
			t.Errorf("%v: want a rule 9 rebalance", a)
		}
	}
	// No loop: once landed, X's reclaimed jobs wait held and X, now
	// borrowing 2 as Y does, preempts nothing back.
	w := newWorld(t, s, time.Second)
	w.step()
	if j := w.job("x0"); j.Rebalanced != 1 || j.Queue != QueueHeld {
		t.Errorf("x0 rebalanced %d times, in %s", j.Rebalanced, j.Queue)
	}
	for range 3 {
		if p := w.step(); p.Count(Reclaim) != 0 {
			t.Errorf("rebalancing loops:\n%s", p)
		}
	}

	t.Run("min run", func(t *testing.T) {
		s := mk(on)
		s.Config.Shares.Rebalance.MinRun = 3 * time.Hour
		if p := Decide(mustValidSnap(t, s), t0); !p.Empty() {
			t.Errorf("loans younger than min_run are not preempted:\n%s", p)
		}
	})
	t.Run("max per attempt", func(t *testing.T) {
		s := mk(on)
		for i := range s.Jobs {
			if s.Jobs[i].ID == "x0" {
				s.Jobs[i].Rebalanced = 2
			}
		}
		wantList(t, "reclaims", kinds(Decide(mustValidSnap(t, s), t0), Reclaim), "x1[X>Y]", "x2[X>Y]")
	})
	t.Run("dead zone", func(t *testing.T) {
		s := mk(on)
		s.Config.Shares.Rebalance.DeadZone = 4
		if p := Decide(mustValidSnap(t, s), t0); !p.Empty() {
			t.Errorf("a gap inside the dead zone moves nothing:\n%s", p)
		}
	})
}

func TestSharesLendAndOverflow(t *testing.T) {
	// 8 slots, A 4, B 4 with B lending nothing. A runs 4: a burst job of
	// A's above its share cannot be lent; B's can.
	var js []Job
	for i := range 4 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", "f1", ago(time.Hour), time.Time{}))
	}
	ab := queued("ab", jobs.ClassBurst, QueueBurst, ago(time.Minute))
	ab.Team = "A"
	bb := queued("bb", jobs.ClassBurst, QueueBurst, ago(time.Minute))
	bb.Team = "B"
	s := shareSnap(2, []shares.Team{team("A", 4), team("B", 4)}, append(js, ab, bb)...)
	s.Config.Shares.Teams[1].LendLimit = 0
	s.Config.High = 1
	p := Decide(mustValidSnap(t, s), t0)
	if got := summary(p); !strings.Contains(got, "lend(bb)") || strings.Contains(got, "lend(ab)") {
		t.Errorf("want bb lent and ab not: %s", got)
	}

	t.Run("held work overflows by rule 7", func(t *testing.T) {
		s := s
		s.Config.CoreOverflow, s.Config.CoreMaxWait = true, 10*time.Minute
		s.Jobs = append(slices.Clone(js), held("old", "A", ago(20*time.Minute)), held("new", "A", ago(time.Minute)))
		p := Decide(mustValidSnap(t, s), t0)
		if got := summary(p); !strings.Contains(got, "overflow(old,od)") || strings.Contains(got, "(new") {
			t.Errorf("want old overflowed, new held: %s", got)
		}
	})
}

// TestSharesOffPlansAsBefore: teams on jobs, decayed usage and held
// fields change nothing while no share is configured.
func TestSharesOffPlansAsBefore(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t)
		names := []string{"", "A", "B"}
		s2 := s
		s2.Jobs = slices.Clone(s.Jobs)
		for i := range s2.Jobs {
			s2.Jobs[i].Team = rapid.SampledFrom(names).Draw(t, "team")
			s2.Jobs[i].Grace = time.Duration(rapid.IntRange(0, 60).Draw(t, "grace")) * time.Second
		}
		s2.TeamUsage = map[string]float64{"A": 1, "B": 2}
		s2.Config.Tick = time.Second
		if a, b := Decide(s, t0), Decide(s2, t0); !reflect.DeepEqual(a, b) {
			t.Fatalf("teams without shares changed the plan:\n%s\nvs\n%s", a, b)
		}
	})
}

// TestSharesDeterministic shuffles the snapshot's slices.
func TestSharesDeterministic(t *testing.T) {
	s := stepScenario()
	for i := range 4 {
		s.Jobs = append(s.Jobs, held(fmt.Sprintf("b%d", i+1), "B", t0), held(fmt.Sprintf("c%d", i+1), "C", t0))
	}
	s.Config.Shares.Rebalance = shares.Rebalance{Enabled: true, MaxPerAttempt: 1}
	mustValid(t, s)
	want := Decide(s, t0)
	if want.Count(Reclaim) != 8 {
		t.Fatalf("want 8 reclaims:\n%s", want)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		s2 := s
		s2.Jobs, s2.Workers = slices.Clone(s.Jobs), slices.Clone(s.Workers)
		r.Shuffle(len(s2.Jobs), func(i, j int) { s2.Jobs[i], s2.Jobs[j] = s2.Jobs[j], s2.Jobs[i] })
		r.Shuffle(len(s2.Workers), func(i, j int) { s2.Workers[i], s2.Workers[j] = s2.Workers[j], s2.Workers[i] })
		if got := Decide(s2, t0); !reflect.DeepEqual(got, want) {
			t.Fatalf("plan depends on the snapshot's order:\n%s\nvs\n%s", got, want)
		}
	}
}

func TestSharesValidate(t *testing.T) {
	s := stepScenario()
	// Not shares past the fixed slots up: a worker may be down (see
	// TestSharesValidWithAFixedWorkerDown).
	s.Config.Shares.Teams[0].LendLimit = 12 // more than its share of 8
	s.Config.Tick = 0
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "config.shares") || !strings.Contains(err.Error(), "config.tick") {
		t.Errorf("want the shares and the tick named: %v", err)
	}
}

func TestSharesSizedOwnerReclaimsLoansOnOneWorker(t *testing.T) {
	// 8 slots on two workers, A 4 and B 4. A runs 4 jobs within its
	// share on f1 (older) and 4 loans on f2. B's admitted 3-slot job fits
	// nowhere: the loans on f2 make room for it, A's in-share jobs do not.
	var js []Job
	for i := range 4 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", "f1", ago(2*time.Hour), ago(time.Second)))
		js = append(js, onFixed(fmt.Sprintf("l%d", i), "A", "f2", ago(time.Hour), ago(time.Duration(i+1)*time.Minute)))
	}
	b := queued("b", jobs.ClassCore, QueueCore, t0)
	b.Team, b.Slots = "B", 3
	s := shareSnap(2, []shares.Team{team("A", 4), team("B", 4)}, append(js, b)...)
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "reclaims", kinds(p, Reclaim), "l0[A>B]", "l1[A>B]", "l2[A>B]")
	if got := summary(p); !strings.Contains(got, "place(b)") {
		t.Errorf("b reserves the worker its victims leave: %s", got)
	}
}

func TestSharesOffAdmitsHeldWork(t *testing.T) {
	s := shareSnap(1, nil, held("h1", "A", t0))
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "admissions", kinds(p, Admit), "h1[A>]")
}

// BenchmarkIndexDecideShares is BenchmarkIndexDecide's installation with
// team shares on: three teams sharing most of the 800 fixed slots, every
// job of one of them, the queued core work held.
func BenchmarkIndexDecideShares(b *testing.B) {
	s := benchSnapshot()
	s.Config.Tick = time.Second
	s.Config.Shares = shares.Config{Teams: []shares.Team{team("A", 300), team("B", 300), team("C", 100)}}
	for i := range s.Config.Shares.Teams {
		s.Config.Shares.Teams[i].BorrowLimit = 800
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.Team = []string{"A", "B", "C"}[i%3]
		j.Checkpointable, j.Retryable, j.Grace = true, true, 10*time.Second
		if j.queued() && j.Queue == QueueCore {
			j.Queue = QueueHeld
		}
	}
	mustValid(b, s)
	for _, steady := range []bool{false, true} {
		if steady {
			// The plan in flight: what a tick between events sees.
			s = Apply(s, Decide(s, t0), t0)
		}
		b.Run(fmt.Sprintf("steady=%v", steady), func(b *testing.B) {
			ix := IndexOf(s)
			j := s.Jobs[len(s.Jobs)-1]
			b.ReportAllocs()
			for b.Loop() {
				j.QueuedAt = j.QueuedAt.Add(time.Millisecond)
				ix.PutJob(j)
				ix.Decide(t0)
			}
		})
	}
}

func TestSharesLendLimitsKeptOnceLoansRun(t *testing.T) {
	// 12 slots: A 4, B 4 lending nothing, C 4 lending all. A runs 8, its
	// 4 loans on C's idle share. C's 2 held jobs start on free slots
	// (B's idle share): nobody waits, but C now lends only 2, so 2 of A's
	// loans go, charged to B, whose unlent slots the loans hold.
	var js []Job
	for i := range 8 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", fmt.Sprintf("f%d", i/4+1), ago(2*time.Hour-time.Duration(i)*time.Minute), ago(time.Duration(8-i)*time.Minute)))
	}
	js = append(js, held("c1", "C", t0), held("c2", "C", t0))
	teams := []shares.Team{team("A", 4), team("B", 4), team("C", 4)}
	teams[1].LendLimit = 0
	p := Decide(mustValidSnap(t, shareSnap(3, teams, js...)), t0)
	wantList(t, "admissions", kinds(p, Admit), "c1[C>C]", "c2[C>C]")
	wantList(t, "reclaims", kinds(p, Reclaim), "a7[A>B]", "a6[A>B]")
}

func TestSharesOwnLoansGiveWayToHeldCore(t *testing.T) {
	// A's share is 2: it runs 1 and has a burst job lent (not started,
	// not reclaimable) and a core job held. The core job takes the share;
	// the burst job goes back to burst, for elastic capacity.
	lent := queued("lb", jobs.ClassBurst, QueueLoan, ago(time.Minute))
	lent.Team, lent.Checkpointable = "A", false
	s := shareSnap(2, []shares.Team{team("A", 2), team("B", 6)},
		onFixed("a1", "A", "f1", ago(time.Hour), time.Time{}), lent, held("h", "A", ago(time.Minute)))
	p := Decide(mustValidSnap(t, s), t0)
	if got := summary(p); got != "unlend(lb) admit(h) scale_up(od,1)" {
		t.Errorf("got %s, want the unlend first, then the admission\n%s", got, p)
	}
	for _, a := range p.Actions {
		if a.Kind == Unlend && (a.Rule != 9 || a.Team != "A") {
			t.Errorf("%v: want rule 9 for team A", a)
		}
	}
}

// A fixed worker down leaves fewer fixed slots up than the shares add up
// to: the snapshot is still valid, and rule 9 still decides in it; the
// shares' own problems are still reported.
func TestSharesValidWithAFixedWorkerDown(t *testing.T) {
	s := stepScenario()
	s.Workers = s.Workers[:3] // f4 is down: 12 slots up, shares of 16
	s.Jobs = slices.DeleteFunc(s.Jobs, func(j Job) bool { return j.Worker == "f4" })
	s.Jobs = append(s.Jobs, held("b1", "B", ago(time.Minute)))
	if err := s.Validate(); err != nil {
		t.Fatalf("a snapshot with a fixed worker down: %v", err)
	}
	// B's in-share job is admitted, and a loan of A reclaimed for it.
	p := Decide(s, t0)
	if got := kinds(p, Admit); len(got) != 1 || len(kinds(p, Reclaim)) != 1 {
		t.Errorf("admits %v, reclaims %v; want b1 admitted and one of A's loans reclaimed", got, kinds(p, Reclaim))
	}
	s.Config.Shares.Teams[1].Slots = -1
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "a share cannot be negative") {
		t.Errorf("a negative share: error %v", err)
	}
}

// A retry after a failure waits in held out its back-off: rule 9 admits it
// neither in share nor as a loan before its NotBefore, so it does not hold
// a slot, or make loans be reclaimed, for work that cannot start yet.
func TestSharesHeldRetryWaitsOutItsBackOff(t *testing.T) {
	mk := func(notBefore time.Time) Snapshot {
		in, loan := held("retry-in", "A", ago(time.Minute)), held("retry-loan", "A", ago(time.Minute))
		in.NotBefore, loan.NotBefore = notBefore, notBefore
		js := []Job{onFixed("a1", "A", "f1", ago(time.Hour), time.Time{}), in, loan}
		return shareSnap(1, []shares.Team{team("A", 2), team("B", 2)}, js...)
	}
	wantList(t, "admissions before the back-off ends", kinds(Decide(mustValidSnap(t, mk(t0.Add(time.Minute))), t0), Admit))
	wantList(t, "admissions once it ends", kinds(Decide(mustValidSnap(t, mk(t0)), t0), Admit), "retry-in[A>A]", "retry-loan[A>]")
}

// What the controller reads of the index each tick for the share metrics:
// each team's use of up fixed workers, with a GPU share at its share, and
// each team's waiting core work with its oldest wait.
func TestSharesIndexReadsTeamUseAndWaits(t *testing.T) {
	half := onFixed("a2", "A", "f1", ago(time.Hour), time.Time{})
	half.Share = 500
	s := shareSnap(2, []shares.Team{team("A", 4), team("B", 4)},
		onFixed("a1", "A", "f1", ago(time.Hour), time.Time{}), half,
		onFixed("b1", "B", "f2", ago(time.Hour), time.Time{}),
		held("h1", "A", ago(3*time.Minute)), held("h2", "A", ago(time.Minute)))
	ix := IndexOf(s)
	used, slots := ix.FixedTeamUse()
	if slots != 8 || used["A"] != 1.5 || used["B"] != 1 {
		t.Fatalf("use %v of %d slots; want A 1.5 and B 1 of 8", used, slots)
	}
	w := ix.CoreWaits()
	if a := w["A"]; a.Jobs != 2 || !a.Oldest.Equal(ago(3*time.Minute)) || w["B"].Jobs != 0 {
		t.Fatalf("waits %+v; want A's 2, the oldest 3 minutes ago, and none for B", w)
	}
}
