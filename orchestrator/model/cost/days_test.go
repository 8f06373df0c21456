package cost

import (
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin for the DST test, whatever the host has.

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// TestUsageAcrossMidnightSplitsByLocalDay: in UTC+5:30 an attempt from
// 23:00 to 01:30 local is split 1 h / 1.5 h across two local days, though
// in UTC (17:30 to 20:00) it lies within one day. So is its lost work
// (the last 2 h: 23:30 to 01:30), the worker's billed time (22:00 to
// 02:00) and the quota.
func TestUsageAcrossMidnightSplitsByLocalDay(t *testing.T) {
	ist := time.FixedZone("IST", 5*3600+1800)
	local := func(d, hh, mm int) time.Time { return time.Date(2025, 3, d, hh, mm, 0, 0, ist) }
	od := policy.Pool{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 3,
		Billing: policy.BillingPerSecond, SlotsPerWorker: 2}
	r := mustCompute(t, Ledger{
		Pools:   []policy.Pool{fixedPool, od},
		Quotas:  []Quota{{Pool: "fixed", Slots: 1, PricePerSlotHour: 1}},
		Workers: []WorkerSpan{{ID: "w", Pool: "od", Start: local(10, 22, 0), End: local(11, 2, 0)}},
		Usage: []Usage{{JobID: "j", Pool: "od", Slots: 2, Start: local(10, 23, 0), End: local(11, 1, 30),
			LostWork: 2 * h}},
		From:     local(10, 0, 0),
		Until:    local(12, 0, 0),
		Location: ist,
	})
	if len(r.Days) != 2 {
		t.Fatalf("days = %+v, want 2025-03-10 and 2025-03-11", r.Days)
	}
	d1, d2 := day(t, r, "2025-03-10"), day(t, r, "2025-03-11")
	if !d1.Start.Equal(local(10, 0, 0)) || !d2.Start.Equal(local(11, 0, 0)) {
		t.Errorf("day starts %v and %v, want local midnights", d1.Start, d2.Start)
	}
	// Day 1: 2 slots × 1 h used at 3, premium (3-1) per slot-h; lost 2 ×
	// 0.5 h. Paid: quota 24 slot-h at 1, worker 2 slots × 2 h at 3.
	checkFigures(t, "day 1", d1.Figures, Figures{SlotHours: 2, Cost: 6, LostSlotHours: 1, LostCost: 3, Premium: 4})
	checkPaid(t, "day 1", d1.Paid, Paid{PaidSlotHours: 24 + 4, PaidCost: 24 + 12, IdleSlotHours: 28 - 2, IdleCost: 36 - 6})
	// Day 2: 2 slots × 1.5 h, all of it lost; paid the same as day 1.
	checkFigures(t, "day 2", d2.Figures, Figures{SlotHours: 3, Cost: 9, LostSlotHours: 3, LostCost: 9, Premium: 6})
	checkPaid(t, "day 2", d2.Paid, Paid{PaidSlotHours: 28, PaidCost: 36, IdleSlotHours: 25, IdleCost: 27})
	// The job itself is not split.
	checkFigures(t, "job j", job(t, r, "j").Figures, Figures{SlotHours: 5, Cost: 15, LostSlotHours: 4, LostCost: 12, Premium: 10})
}

// TestSpringForwardDayHas23Hours: Berlin skips 02:00 to 03:00 on 30 March
// 2025, so that day's quota is 23 slot-h, and an attempt from 23:00 the
// day before to 04:00 is 3 h on it (the hour before midnight is outside
// the window).
func TestSpringForwardDayHas23Hours(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	local := func(d, hh int) time.Time { return time.Date(2025, 3, d, hh, 0, 0, 0, berlin) }
	r := mustCompute(t, Ledger{
		Pools:    []policy.Pool{fixedPool},
		Quotas:   []Quota{{Pool: "fixed", Slots: 1, PricePerSlotHour: 1}},
		Usage:    []Usage{{JobID: "j", Pool: "fixed", Slots: 1, Start: local(29, 23), End: local(30, 4)}},
		From:     local(30, 0),
		Until:    local(31, 0),
		Location: berlin,
	})
	if len(r.Days) != 1 || r.Days[0].Day != "2025-03-30" {
		t.Fatalf("days = %+v, want 2025-03-30 only", r.Days)
	}
	checkPaid(t, "2025-03-30", r.Days[0].Paid, Paid{PaidSlotHours: 23, PaidCost: 23, IdleSlotHours: 20, IdleCost: 20})
	checkFigures(t, "2025-03-30", r.Days[0].Figures, Figures{SlotHours: 3, Cost: 3})
}
