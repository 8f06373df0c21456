package policy

import (
	"fmt"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
)

// Shares bound for the quota count packed, as the index counts them on
// the next tick, so that the plan after its own outcome is empty: rule 2
// counts a lent share as the slot its sum with the loans' shares fills,
// and unlends until the packed count falls.
func TestSharesCountPackedForTheQuota(t *testing.T) {
	share := func(id string, q Queue, milli int, at time.Duration) Job {
		j := queued(id, jobs.ClassBurst, q, ago(at))
		j.Share = milli
		return j
	}
	lendSnap := func() Snapshot {
		pools, workers := fixedWith(10, 4)
		s := snap(pools, workers,
			share("q1", QueueBurst, 400, 4*time.Minute), share("q2", QueueBurst, 400, 3*time.Minute),
			share("q3", QueueBurst, 300, 2*time.Minute), share("q4", QueueBurst, 500, time.Minute))
		s.Config.High = 0.6 // 6 of 10 slots; 4 busy
		return s
	}
	unlendSnap := func() Snapshot {
		pools, workers := fixedWith(10, 8)
		return snap(pools, workers,
			queued("c1", jobs.ClassCore, QueueCore, ago(time.Minute)),
			share("l1", QueueLoan, 600, 4*time.Minute), share("l2", QueueLoan, 600, 3*time.Minute),
			share("l3", QueueLoan, 300, 2*time.Minute))
	}
	runSteadyCases(t, []planCase{
		// Two slots are left under the watermark: 0.4 and 0.4 fill one,
		// 0.3 starts the second, and lending stops there. Counted as a
		// slot each, the first two would stop it, and the next tick,
		// finding them packed in one, would lend 0.3.
		{"shares are lent as their sum fills the slots under high", lendSnap(), t0, "lend(q1) lend(q2) lend(q3)"},
		// 1.5 GPUs of loans fill 2 slots, one more than the 1 free slot
		// the queued core job leaves: the newest go until they fill 1.
		{"loans go back until their packed sum fits", unlendSnap(), t0, "unlend(l3) unlend(l2)"},
	}, summary)
}

// Shares that also ask for CPUs go through rule 8 and rule 1's sized
// count; each counts as the slot its share fills there, and no more.
func TestSizedSharesCountPacked(t *testing.T) {
	share := func(id string, class jobs.Class, q Queue, milli int, cpus float64, at time.Duration) Job {
		j := queued(id, class, q, ago(at))
		j.Share, j.CPUs = milli, cpus
		return j
	}
	// Without queued core work rule 2 unlends nothing, so a sized loan
	// share takes the free slot even though the loans' packed count
	// stays: the newer loan share waits.
	f := worker("f1", "fx", 2, 1)
	f.CPUs = 4
	loans := snap([]Pool{fixedPool("fx", "eu")}, []Worker{f},
		share("s1", jobs.ClassBurst, QueueLoan, 500, 1, 2*time.Minute),
		share("t1", jobs.ClassBurst, QueueLoan, 500, 0, time.Minute))
	// Two core shares fill one slot together; the quota is full of
	// loans, so one loan goes back for the one that fits a fixed worker.
	// The other asks for more CPUs than any has: counted as a slot of
	// its own, it hid the first one's need, which then waited for ever.
	full := worker("f1", "fx", 2, 0)
	full.CPUs = 4
	lent := func(id string) Job {
		j := running(id, jobs.ClassBurst, full, ago(time.Hour))
		j.Queue = QueueLoan
		return j
	}
	core := snap([]Pool{fixedPool("fx", "eu")}, []Worker{full}, lent("l1"), lent("l2"),
		share("c1", jobs.ClassCore, QueueCore, 500, 0, 2*time.Minute),
		share("c2", jobs.ClassCore, QueueCore, 500, 8, time.Minute))
	runSteadyCases(t, []planCase{
		{"a sized loan share takes the free slot when no core work waits", loans, t0, "place(s1,f1)"},
		{"a sized core share counts packed with the others in rule 1", core, t0, "reclaim(l1,f1)"},
	}, placeSummary)
}

// Held shares admitted within their team's share need only the slots
// their sum fills: three 0.3 shares of A take one of B's loans back, not
// three.
func TestOwnersHeldSharesReclaimPacked(t *testing.T) {
	var js []Job
	for i := range 4 {
		js = append(js, onFixed(fmt.Sprintf("b%d", i+1), "B", "f1", ago(time.Hour+time.Duration(i)*time.Second), ago(time.Minute)))
	}
	for i := range 3 {
		j := held(fmt.Sprintf("a%d", i+1), "A", ago(time.Minute))
		j.Share = 300
		js = append(js, j)
	}
	s := shareSnap(1, []shares.Team{team("A", 2), team("B", 2)}, js...)
	mustValid(t, s)
	p := Decide(s, t0)
	wantList(t, "A's admissions", kinds(p, Admit), "a1[A>A]", "a2[A>A]", "a3[A>A]")
	if got := kinds(p, Reclaim); len(got) != 1 {
		t.Errorf("reclaims %v, want one: 0.9 of a GPU fills one slot\n%s", got, p)
	}
	if next := Decide(Apply(s, p, t0), t0); !next.Empty() {
		t.Errorf("after\n%s\nthe next plan is\n%s", p, next)
	}
}
