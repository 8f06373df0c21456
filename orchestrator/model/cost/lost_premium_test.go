package cost

import (
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// lostLedger is one hour with a 2-slot quota at 2 per slot-hour, spot at
// 0.5 and on-demand at 5, all billed per second. Job j1 is reclaimed on
// spot after 20 min, losing 15 min, and finishes on on-demand in 30 min;
// j2 is reclaimed from the quota after 30 min, losing 10 min.
func lostLedger() Ledger {
	spot := policy.Pool{Name: "spot", Kind: policy.PoolSpot, PricePerSlotHour: 0.5,
		Billing: policy.BillingPerSecond, SlotsPerWorker: 1}
	od := policy.Pool{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 5,
		Billing: policy.BillingPerSecond, SlotsPerWorker: 1}
	return Ledger{
		Pools:  []policy.Pool{fixedPool, spot, od},
		Quotas: []Quota{{Pool: "fixed", Slots: 2, PricePerSlotHour: 2}},
		Workers: []WorkerSpan{
			{ID: "s", Pool: "spot", Start: at(0), End: at(20 * m)},
			{ID: "o", Pool: "od", Start: at(20 * m), End: at(50 * m)},
		},
		Usage: []Usage{
			{JobID: "j1", Team: "t1", Pool: "spot", Slots: 1, Start: at(0), End: at(20 * m), LostWork: 15 * m},
			{JobID: "j1", Team: "t1", Pool: "od", Slots: 1, Start: at(20 * m), End: at(50 * m)},
			{JobID: "j2", Team: "t2", Pool: "fixed", Slots: 1, Start: at(0), End: at(30 * m), LostWork: 10 * m},
		},
		From:  at(0),
		Until: at(h),
	}
}

func TestLostWorkAndPremium(t *testing.T) {
	r := mustCompute(t, lostLedger())
	// j1 on spot: 1/3 slot-h at 0.5 = 1/6, premium (0.5-2)/3 = -0.5, a
	// saving; lost 0.25 slot-h at 0.5 = 0.125. On od: 0.5 slot-h at 5 =
	// 2.5, premium (5-2) × 0.5 = 1.5.
	checkFigures(t, "spot", pool(t, r, "spot").Figures, Figures{SlotHours: 1.0 / 3, Cost: 0.5 / 3,
		LostSlotHours: 0.25, LostCost: 0.125, Premium: -0.5})
	checkFigures(t, "od", pool(t, r, "od").Figures, Figures{SlotHours: 0.5, Cost: 2.5, Premium: 1.5})
	checkFigures(t, "job j1", job(t, r, "j1").Figures, Figures{SlotHours: 1.0/3 + 0.5, Cost: 0.5/3 + 2.5,
		LostSlotHours: 0.25, LostCost: 0.125, Premium: 1})
	// j2 on the quota: 0.5 slot-h at 2 = 1, no premium; lost 1/6 slot-h
	// at 2 = 1/3.
	checkFigures(t, "team t2", groupRow(t, r.Teams, "t2").Figures, Figures{SlotHours: 0.5, Cost: 1,
		LostSlotHours: 1.0 / 6, LostCost: 2.0 / 6})
	checkFigures(t, "total", r.Total.Figures, Figures{SlotHours: 1.0/3 + 0.5 + 0.5, Cost: 0.5/3 + 2.5 + 1,
		LostSlotHours: 0.25 + 1.0/6, LostCost: 0.125 + 2.0/6, Premium: 1})
}

// TestPremiumNeedsAFixedPrice: with no quota the same on-demand hours have
// nothing to be compared with.
func TestPremiumNeedsAFixedPrice(t *testing.T) {
	l := lostLedger()
	l.Quotas = nil
	l.Usage = l.Usage[:2]
	r := mustCompute(t, l)
	near(t, "premium without quota", r.Total.Premium, 0)
	near(t, "cost without quota", r.Total.Cost, 0.5/3+2.5)
	if r.Fixed.PricePerSlotHour != 0 {
		t.Errorf("fixed price = %v, want 0 with no quota", r.Fixed.PricePerSlotHour)
	}
}

// TestFixedPriceIsTheQuotasAverage: quotas of 2 slots at 1 and 2 at 3
// cost 2 per slot-hour together, and each fixed attempt is charged its own
// quota's price.
func TestFixedPriceIsTheQuotasAverage(t *testing.T) {
	l := lostLedger()
	f2 := policy.Pool{Name: "fixed2", Kind: policy.PoolFixed}
	l.Pools = append(l.Pools, f2)
	l.Quotas = []Quota{{Pool: "fixed", Slots: 2, PricePerSlotHour: 1}, {Pool: "fixed2", Slots: 2, PricePerSlotHour: 3}}
	l.Usage = append(l.Usage, Usage{JobID: "j3", Pool: "fixed2", Slots: 2, Start: at(0), End: at(h)})
	r := mustCompute(t, l)
	near(t, "fixed price", r.Fixed.PricePerSlotHour, 2)
	// Premium as in TestLostWorkAndPremium: the average equals its price.
	near(t, "j1 premium", job(t, r, "j1").Premium, 1)
	// j2: 0.5 slot-h at 1; j3: 2 slot-h at 3.
	near(t, "j2 cost", job(t, r, "j2").Cost, 0.5)
	near(t, "j3 cost", job(t, r, "j3").Cost, 6)
	// Quota: 4 slot-h, 2 + 6 = 8; used 2.5 slot-h, 6.5.
	checkPaid(t, "fixed summary", r.Fixed.Paid, Paid{PaidSlotHours: 4, PaidCost: 8, IdleSlotHours: 1.5, IdleCost: 1.5})
}
