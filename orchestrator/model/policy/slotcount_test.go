package policy

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
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
