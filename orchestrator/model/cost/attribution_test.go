package cost

import (
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// TestWorkerCostSplitBySlotTime: one 4-slot worker billed per minute at 2
// per slot-hour lives exactly 10 min, so it is billed 10 min (not 11):
// 4 × 10/60 slot-h = 2/3, cost 4/3. Job x holds 2 slots for the whole 10
// min, job y 1 slot for 5 min. Each is charged its slot-time at the
// worker's rate; the 15 slot-min nobody used are the pool's idle cost.
func TestWorkerCostSplitBySlotTime(t *testing.T) {
	pl := policy.Pool{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 2,
		Billing: policy.BillingPerMinute, SlotsPerWorker: 4}
	r := mustCompute(t, Ledger{
		Pools:   []policy.Pool{pl},
		Workers: []WorkerSpan{{ID: "w", Pool: "od", Start: at(0), End: at(10 * m)}},
		Usage: []Usage{
			{JobID: "x", Team: "t", Pool: "od", Slots: 2, Start: at(0), End: at(10 * m)},
			{JobID: "y", Team: "t", Pool: "od", Slots: 1, Start: at(2 * m), End: at(7 * m)},
		},
		From:  at(0),
		Until: at(h),
	})
	// x: 2 slots × 10 min = 20 slot-min = 1/3 slot-h, × 2 = 2/3.
	checkFigures(t, "job x", job(t, r, "x").Figures, Figures{SlotHours: 20.0 / 60, Cost: 2 * 20.0 / 60})
	// y: 1 slot × 5 min = 5 slot-min, × 2 = 1/6.
	checkFigures(t, "job y", job(t, r, "y").Figures, Figures{SlotHours: 5.0 / 60, Cost: 2 * 5.0 / 60})
	// Paid 40 slot-min = 4/3; used 25 slot-min = 5/6; idle 15 slot-min = 1/2.
	od := pool(t, r, "od")
	checkPaid(t, "od", od.Paid, Paid{PaidSlotHours: 40.0 / 60, PaidCost: 2 * 40.0 / 60,
		IdleSlotHours: 15.0 / 60, IdleCost: 2 * 15.0 / 60})
	near(t, "od used share", od.UsedShare, 25.0/40)
	near(t, "od idle share", od.IdleShare, 15.0/40)
	// Without quota there is no fixed price, so no premium.
	near(t, "total premium", r.Total.Premium, 0)
	// The jobs' charges and the idle cost add up to the bill.
	near(t, "x + y + idle", job(t, r, "x").Cost+job(t, r, "y").Cost+od.IdleCost, od.PaidCost)
	// The team is charged its jobs, not the idle cost.
	near(t, "team t cost", groupRow(t, r.Teams, "t").Cost, 2*25.0/60)
}
