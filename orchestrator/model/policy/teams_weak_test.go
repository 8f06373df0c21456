package policy

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
)

// TestSharesReclaimCountsWhatGPUSharesFree checks that a reclaim of a job
// holding a share of a GPU counts only the slots that actually empty: on
// a 4-slot worker, A (share 2) runs two whole in-share jobs and four
// loans of half a GPU each, packed in two slots. B's one in-share job
// needs a slot, which only two of the loans leaving free.
func TestSharesReclaimCountsWhatGPUSharesFree(t *testing.T) {
	var js []Job
	for i := range 2 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", "f1", ago(3*time.Hour), ago(time.Second)))
	}
	for i := range 4 {
		l := onFixed(fmt.Sprintf("g%d", i), "A", "f1", ago(time.Hour), ago(time.Duration(i+1)*time.Minute))
		l.Share = 500
		js = append(js, l)
	}
	js = append(js, held("b", "B", t0))
	s := shareSnap(1, []shares.Team{team("A", 2), team("B", 2)}, js...)
	s.Workers[0].Busy = 4
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "admissions", kinds(p, Admit), "b[B>B]")
	wantList(t, "reclaims", kinds(p, Reclaim), "g0[A>B]", "g1[A>B]")
}

// TestSharesSizedOwnerReclaimsFromTheBiggestBorrower checks that an
// owner's sized job takes its slots from the biggest borrower over
// weight, as its one-slot work would, not from the worker whose loans
// lose least: A borrows 4 slots at weight 1 (on f1), B 4 at weight 2
// (on f2, its loans cheaper to stop); C's 3-slot job takes A's.
func TestSharesSizedOwnerReclaimsFromTheBiggestBorrower(t *testing.T) {
	b := team("B", 2)
	b.Weight = 2
	var js []Job
	for i := range 2 {
		js = append(js, onFixed(fmt.Sprintf("ai%d", i), "A", "f3", ago(3*time.Hour), ago(time.Second)))
		js = append(js, onFixed(fmt.Sprintf("bi%d", i), "B", "f3", ago(3*time.Hour), ago(time.Second)))
	}
	for i := range 4 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", "f1", ago(time.Hour), ago(time.Duration(10+i)*time.Minute)))
		js = append(js, onFixed(fmt.Sprintf("b%d", i), "B", "f2", ago(time.Hour), ago(time.Duration(1+i)*time.Minute)))
	}
	c := queued("c", jobs.ClassCore, QueueCore, t0)
	c.Team, c.Slots = "C", 3
	s := shareSnap(3, []shares.Team{team("A", 2), b, team("C", 8)}, append(js, c)...)
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "reclaims", kinds(p, Reclaim), "a0[A>C]", "a1[A>C]", "a2[A>C]")
}

// TestSharesReclaimSparesLoansPartlyInShare checks that a loan whose
// reclaim would bring its team below its share is taken only when no
// other victim exists: A (share 1) runs one 2-slot job, a loan only half
// of which is above its share; D (share 3) runs a whole loan. Both borrow
// one slot, A first by name, but B's third job takes D's loan.
func TestSharesReclaimSparesLoansPartlyInShare(t *testing.T) {
	a := onFixed("a", "A", "f1", ago(time.Hour), ago(time.Second))
	a.Slots = 2
	js := []Job{a}
	for i := range 4 {
		w := "f1"
		if i >= 2 {
			w = "f2"
		}
		js = append(js, onFixed(fmt.Sprintf("d%d", i), "D", w, ago(time.Duration(4-i)*time.Hour), ago(time.Hour)))
	}
	for i := range 3 {
		js = append(js, held(fmt.Sprintf("b%d", i), "B", t0))
	}
	s := shareSnap(2, []shares.Team{team("A", 1), team("B", 4), team("D", 3)}, js...)
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "admissions", kinds(p, Admit), "b0[B>B]", "b1[B>B]", "b2[B>B]")
	wantList(t, "reclaims", kinds(p, Reclaim), "d3[D>B]")

	// Without D's loan, and with a fourth job of B waiting, A's is the
	// only victim left: the owner wins.
	js = append(slices.Delete(js, 4, 5), held("b3", "B", t0))
	s = shareSnap(2, []shares.Team{team("A", 1), team("B", 4), team("D", 3)}, js...)
	p = Decide(mustValidSnap(t, s), t0)
	wantList(t, "reclaims once only A's is left", kinds(p, Reclaim), "a[A>B]")
}

// TestSharesDeadWorkersCoreJobsWaitForAdmission checks how rule 9 treats
// the core jobs of a dead fixed worker, which the store requeues
// readmitted to held, not core: they are not admitted work until rule 9
// admits them again, and they are first in line for it. Shares A 4 and B
// 2 on two workers (2 slots common); A fills f1 within its share, and a
// dead worker's jobs wait in held: two loans of A and one in-share job of
// B, beside new held work of both. B's readmitted job goes first and its
// new one still fits its share (the readmitted one is not counted twice);
// A's readmitted loans take the common slots ahead of A's new job.
func TestSharesDeadWorkersCoreJobsWaitForAdmission(t *testing.T) {
	var js []Job
	for i := range 4 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", "f1", ago(3*time.Hour), ago(time.Second)))
	}
	requeued := func(id, team string) Job {
		j := held(id, team, ago(time.Hour))
		j.Readmitted, j.LastCheckpointAt = true, ago(2*time.Minute)
		return j
	}
	js = append(js, held("ah", "A", ago(2*time.Hour)), held("bh", "B", ago(2*time.Hour)))
	js = append(js, requeued("la0", "A"), requeued("la1", "A"), requeued("b0", "B"))
	s := shareSnap(2, []shares.Team{team("A", 4), team("B", 2)}, js...) // the dead worker is gone
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "admissions", kinds(p, Admit), "b0[B>B]", "bh[B>B]", "la0[A>]", "la1[A>]")
	wantList(t, "reclaims", kinds(p, Reclaim))
}

// TestSharesDeadWorkersCoreJobsCountAsAdmitted checks how rule 9 counts
// readmitted core jobs found in core rather than held (a store's records
// from before requeues went back to held, or rebuilt by recover): they
// count in their team's use as admitted work. Shares A
// 4 and B 4 on two workers; f2 died with two loans of A and two
// in-share jobs of B on it. A, at its share with its loans queued, has
// nothing admitted, and its in-share work on f1 is never a victim; B's
// held job fits in its share and is admitted.
func TestSharesDeadWorkersCoreJobsCountAsAdmitted(t *testing.T) {
	var js []Job
	for i := range 4 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", "f1", ago(3*time.Hour), ago(time.Second)))
	}
	requeued := func(id, team string) Job {
		j := queued(id, jobs.ClassCore, QueueCore, ago(time.Hour))
		j.Team, j.Checkpointable, j.Retryable, j.Grace, j.Readmitted = team, true, true, 30*time.Second, true
		j.LastCheckpointAt = ago(2 * time.Minute)
		return j
	}
	js = append(js, requeued("la0", "A"), requeued("la1", "A"), requeued("b0", "B"), requeued("b1", "B"))
	js = append(js, held("ah", "A", t0), held("bh", "B", t0))
	s := shareSnap(1, []shares.Team{team("A", 4), team("B", 4)}, js...) // f2 is gone
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "admissions", kinds(p, Admit), "bh[B>B]")
	wantList(t, "reclaims", kinds(p, Reclaim))
}

// TestSharesSizedReclaimCountsWhatGPUSharesFree checks the same for an
// owner's sized job: B's 2-slot job needs both slots A's four half-GPU
// loans fill on f1, so all four go, not the two that a slot each would
// have counted for.
func TestSharesSizedReclaimCountsWhatGPUSharesFree(t *testing.T) {
	var js []Job
	for i := range 2 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", "f1", ago(3*time.Hour), ago(time.Second)))
	}
	for i := range 4 {
		l := onFixed(fmt.Sprintf("g%d", i), "A", "f1", ago(time.Hour), ago(time.Duration(i+1)*time.Minute))
		l.Share = 500
		js = append(js, l)
	}
	b := queued("b", jobs.ClassCore, QueueCore, t0)
	b.Team, b.Slots = "B", 2
	s := shareSnap(1, []shares.Team{team("A", 2), team("B", 2)}, append(js, b)...)
	s.Workers[0].Busy = 4
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "reclaims", kinds(p, Reclaim), "g0[A>B]", "g1[A>B]", "g2[A>B]", "g3[A>B]")
}

// TestSharesLendLimitReclaimSparesLoansPartlyInShare checks that the
// reclaims that keep lend limits take whole loans first too: L (share 4)
// lends 1 slot, and A (share 1, one 2-slot job) and D (share 3, four
// jobs) each borrow one; of the two, D's whole loan goes.
func TestSharesLendLimitReclaimSparesLoansPartlyInShare(t *testing.T) {
	a := onFixed("a", "A", "f1", ago(time.Hour), ago(time.Second))
	a.Slots = 2
	js := []Job{a}
	for i := range 4 {
		w := "f1"
		if i >= 2 {
			w = "f2"
		}
		js = append(js, onFixed(fmt.Sprintf("d%d", i), "D", w, ago(time.Duration(4-i)*time.Hour), ago(time.Hour)))
	}
	l := team("L", 4)
	l.LendLimit = 1
	s := shareSnap(2, []shares.Team{team("A", 1), team("D", 3), l}, js...)
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "reclaims", kinds(p, Reclaim), "d3[D>L]")
}

// TestSharesSizedReclaimSparesLoansPartlyInShare checks that an owner's
// sized job also takes whole loans before one partly within its team's
// share, even from a team that borrows less over its weight: A (share
// 1) runs one 2-slot job on f1 that loses least; D (share 3, weight 4)
// borrows 3 slots on f2. B's 2-slot job takes two of D's loans.
func TestSharesSizedReclaimSparesLoansPartlyInShare(t *testing.T) {
	a := onFixed("a", "A", "f1", ago(time.Hour), ago(time.Second))
	a.Slots = 2
	js := []Job{a}
	for i := range 6 {
		w := "f1"
		if i >= 2 {
			w = "f2"
		}
		js = append(js, onFixed(fmt.Sprintf("d%d", i), "D", w, ago(time.Duration(6-i)*time.Hour), ago(time.Hour)))
	}
	b := queued("b", jobs.ClassCore, QueueCore, t0)
	b.Team, b.Slots = "B", 2
	d := team("D", 3)
	d.Weight = 4
	s := shareSnap(2, []shares.Team{team("A", 1), d, team("B", 4)}, append(js, b)...)
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "reclaims", kinds(p, Reclaim), "d5[D>B]", "d4[D>B]")
}
