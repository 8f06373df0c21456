package cost

import (
	"reflect"
	"slices"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// TestMixedBillingByHand checks every pool, team, template and total
// figure of mixedLedger against a hand calculation. Slot time is written
// in slot-seconds (/3600) or slot-minutes (/60) so each term can be traced
// to one attempt or worker. The fixed price is the quota's, 1 per
// slot-hour, so an elastic slot-hour's premium is its price minus 1.
func TestMixedBillingByHand(t *testing.T) {
	r := mustCompute(t, mixedLedger())

	// fixed: the quota is 4 slots × 2 h = 8 slot-h at 1 = 8, used or not.
	// a1 uses 2 slots × 1 h = 2 slot-h; b1 1 slot × 1.5 h = 1.5 slot-h, and
	// loses its last 6 min: 0.1 slot-h. Idle 8 - 3.5 = 4.5.
	f := pool(t, r, "fixed")
	checkFigures(t, "fixed", f.Figures, Figures{SlotHours: 3.5, Cost: 3.5, LostSlotHours: 0.1, LostCost: 0.1})
	checkPaid(t, "fixed", f.Paid, Paid{PaidSlotHours: 8, PaidCost: 8, IdleSlotHours: 4.5, IdleCost: 4.5})
	near(t, "fixed used share", f.UsedShare, 3.5/8)
	near(t, "fixed idle share", f.IdleShare, 4.5/8)
	near(t, "fixed worker-hours", f.WorkerHours+f.BilledWorkerHours, 0)

	// od, per second with a 60 s minimum, 2-slot workers at 3/slot-h:
	// od-1 lives 30 s, billed the 60 s minimum; od-2 61 s and od-3 90 s
	// are billed as they lived. Billed 60+61+90 = 211 s, lived 181 s,
	// paid 2 × 211 = 422 slot-s = 3 × 422/3600 = 0.351666…
	// Used: a2 2×30 + b2 1×61 + a3 2×90 = 301 slot-s; idle 121 slot-s.
	od := pool(t, r, "od")
	near(t, "od worker-hours", od.WorkerHours, 181.0/3600)
	near(t, "od billed worker-hours", od.BilledWorkerHours, 211.0/3600)
	checkFigures(t, "od", od.Figures, Figures{SlotHours: 301.0 / 3600, Cost: 3 * 301.0 / 3600, Premium: 2 * 301.0 / 3600})
	checkPaid(t, "od", od.Paid, Paid{PaidSlotHours: 422.0 / 3600, PaidCost: 3 * 422.0 / 3600,
		IdleSlotHours: 121.0 / 3600, IdleCost: 3 * 121.0 / 3600})
	near(t, "od used share", od.UsedShare, 301.0/422)
	near(t, "od idle share", od.IdleShare, 121.0/422)

	// spot, per minute, 1-slot workers at 1.5/slot-h: spot-1 lives 90 s
	// and spot-3 61 s, each billed 2 started minutes; spot-2 lives 59 min,
	// billed 59 min. Billed 120+120+3540 = 3780 s = 1.05 h, cost 1.575.
	// Used: b3's three attempts 90 + 61 + 3540 = 3691 slot-s; idle 89.
	// Lost: 45 s and 61 s of b3's first two attempts.
	sp := pool(t, r, "spot")
	near(t, "spot worker-hours", sp.WorkerHours, 3691.0/3600)
	near(t, "spot billed worker-hours", sp.BilledWorkerHours, 1.05)
	checkFigures(t, "spot", sp.Figures, Figures{SlotHours: 3691.0 / 3600, Cost: 1.5 * 3691.0 / 3600,
		LostSlotHours: 106.0 / 3600, LostCost: 1.5 * 106.0 / 3600, Premium: 0.5 * 3691.0 / 3600})
	checkPaid(t, "spot", sp.Paid, Paid{PaidSlotHours: 1.05, PaidCost: 1.575,
		IdleSlotHours: 89.0 / 3600, IdleCost: 1.5 * 89.0 / 3600})

	// hourly, per hour, 4-slot workers at 2/slot-h: hourly-1 lives 59 min,
	// billed 1 h; hourly-2 61 min, billed 2 h. Paid 4 × 3 = 12 slot-h, 24.
	// Used: a4 4×59 + b4 2×61 + a5 2×30 = 418 slot-min; idle 720 - 418.
	hr := pool(t, r, "hourly")
	near(t, "hourly worker-hours", hr.WorkerHours, 2)
	near(t, "hourly billed worker-hours", hr.BilledWorkerHours, 3)
	checkFigures(t, "hourly", hr.Figures, Figures{SlotHours: 418.0 / 60, Cost: 2 * 418.0 / 60, Premium: 418.0 / 60})
	checkPaid(t, "hourly", hr.Paid, Paid{PaidSlotHours: 12, PaidCost: 24,
		IdleSlotHours: 302.0 / 60, IdleCost: 2 * 302.0 / 60})
	near(t, "hourly used share", hr.UsedShare, 418.0/720)

	if got := r.Fixed; got.Slots != 4 || got.PricePerSlotHour != 1 {
		t.Errorf("fixed summary: %d slots at %v, want 4 at 1", got.Slots, got.PricePerSlotHour)
	}
	checkFigures(t, "fixed summary", r.Fixed.Figures, f.Figures)
	checkPaid(t, "fixed summary", r.Fixed.Paid, f.Paid)
	near(t, "fixed summary idle share", r.Fixed.IdleShare, 4.5/8)

	// alpha: a1 (fixed 2 slot-h), a2 (od 60 slot-s), a3 (od 180 slot-s),
	// a4 (hourly 236 slot-min), a5 (hourly 60 slot-min): 2 + 240/3600 +
	// 296/60 = 7 slot-h.
	checkFigures(t, "team alpha", groupRow(t, r.Teams, "alpha").Figures, Figures{
		SlotHours: 7, Cost: 2 + 3*240.0/3600 + 2*296.0/60, Premium: 2*240.0/3600 + 296.0/60})
	// beta: b1 (fixed 1.5 slot-h, 0.1 lost), b2 (od 61 slot-s), b3 (spot
	// 3691 slot-s, 106 lost), b4 (hourly 122 slot-min).
	checkFigures(t, "team beta", groupRow(t, r.Teams, "beta").Figures, Figures{
		SlotHours:     1.5 + 61.0/3600 + 3691.0/3600 + 122.0/60,
		Cost:          1.5 + 3*61.0/3600 + 1.5*3691.0/3600 + 2*122.0/60,
		LostSlotHours: 0.1 + 106.0/3600, LostCost: 0.1 + 1.5*106.0/3600,
		Premium: 2*61.0/3600 + 0.5*3691.0/3600 + 122.0/60})
	// etl: a1 (fixed 2), a2 (od 60 slot-s), b3 (spot 3691 slot-s, 106
	// lost), a5 (hourly 1 slot-h).
	checkFigures(t, "template etl", groupRow(t, r.Templates, "etl").Figures, Figures{
		SlotHours:     2 + 60.0/3600 + 3691.0/3600 + 1,
		Cost:          2 + 3*60.0/3600 + 1.5*3691.0/3600 + 2*1,
		LostSlotHours: 106.0 / 3600, LostCost: 1.5 * 106.0 / 3600,
		Premium: 2*60.0/3600 + 0.5*3691.0/3600 + 1})
	// train: b1 (fixed 1.5, 0.1 lost), b2 + a3 (od 61 + 180 slot-s),
	// a4 + b4 (hourly 236 + 122 slot-min).
	checkFigures(t, "template train", groupRow(t, r.Templates, "train").Figures, Figures{
		SlotHours: 1.5 + 241.0/3600 + 358.0/60, Cost: 1.5 + 3*241.0/3600 + 2*358.0/60,
		LostSlotHours: 0.1, LostCost: 0.1, Premium: 2*241.0/3600 + 358.0/60})

	b3 := job(t, r, "b3")
	if b3.Attempts != 3 || b3.Team != "beta" || b3.Template != "etl" {
		t.Errorf("job b3 = %+v, want 3 attempts of beta/etl", b3)
	}
	checkFigures(t, "job b3", b3.Figures, sp.Figures)

	// Totals: paid 8 + 3×422/3600 + 1.575 + 24; charged the four pools'
	// used slot time; idle the four idle figures above.
	wantUsed := Figures{
		SlotHours:     3.5 + 301.0/3600 + 3691.0/3600 + 418.0/60,
		Cost:          3.5 + 3*301.0/3600 + 1.5*3691.0/3600 + 2*418.0/60,
		LostSlotHours: 0.1 + 106.0/3600, LostCost: 0.1 + 1.5*106.0/3600,
		Premium: 2*301.0/3600 + 0.5*3691.0/3600 + 418.0/60,
	}
	wantPaid := Paid{
		PaidSlotHours: 8 + 422.0/3600 + 1.05 + 12, PaidCost: 8 + 3*422.0/3600 + 1.575 + 24,
		IdleSlotHours: 4.5 + 121.0/3600 + 89.0/3600 + 302.0/60,
		IdleCost:      4.5 + 3*121.0/3600 + 1.5*89.0/3600 + 2*302.0/60,
	}
	checkFigures(t, "total", r.Total.Figures, wantUsed)
	checkPaid(t, "total", r.Total.Paid, wantPaid)
	near(t, "total fixed cost", r.Total.FixedCost, 8)
	near(t, "total elastic cost", r.Total.ElasticCost, 3*422.0/3600+1.575+24)
	near(t, "total used share", r.Total.UsedShare, wantUsed.SlotHours/wantPaid.PaidSlotHours)

	// One UTC day holds everything.
	if len(r.Days) != 1 {
		t.Fatalf("days = %+v, want one", r.Days)
	}
	checkFigures(t, "day", r.Days[0].Figures, wantUsed)
	checkPaid(t, "day", r.Days[0].Paid, wantPaid)
}

func TestReportIsSortedAndIndependentOfInputOrder(t *testing.T) {
	l := mixedLedger()
	r := mustCompute(t, l)
	names := func(n int, name func(int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = name(i)
		}
		return out
	}
	for _, c := range []struct {
		what string
		got  []string
		want []string
	}{
		{"pools", names(len(r.Pools), func(i int) string { return r.Pools[i].Pool }), []string{"fixed", "hourly", "od", "spot"}},
		{"jobs", names(len(r.Jobs), func(i int) string { return r.Jobs[i].JobID }), []string{"a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4"}},
		{"teams", names(len(r.Teams), func(i int) string { return r.Teams[i].Name }), []string{"alpha", "beta"}},
		{"templates", names(len(r.Templates), func(i int) string { return r.Templates[i].Name }), []string{"etl", "train"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}

	slices.Reverse(l.Pools)
	slices.Reverse(l.Workers)
	slices.Reverse(l.Usage)
	if again := mustCompute(t, l); !reflect.DeepEqual(again, r) {
		t.Errorf("reversed ledger gives a different report:\n%+v\nwant\n%+v", again, r)
	}
}

// TestAdjacentWindowsAddUp splits the mixed ledger's two hours in two: a
// worker's billed time past the first window's end (hourly-2's second
// hour) and an attempt across it (b1) are charged to the window they fall
// in, so the halves sum to the whole.
func TestAdjacentWindowsAddUp(t *testing.T) {
	whole := mustCompute(t, mixedLedger())
	first, second := mixedLedger(), mixedLedger()
	first.Until = at(h)
	second.From = at(h)
	a, b := mustCompute(t, first), mustCompute(t, second)

	sum := func(x, y Figures) Figures { x.add(y); return x }
	checkFigures(t, "halves", sum(a.Total.Figures, b.Total.Figures), whole.Total.Figures)
	paid := a.Total.Paid
	paid.add(b.Total.Paid)
	checkPaid(t, "halves", paid, whole.Total.Paid)
	// hourly-2 is billed [0, 2h): 4 slot-h in each half.
	near(t, "second half hourly paid", pool(t, b, "hourly").PaidSlotHours, 4)
	near(t, "first half fixed paid", pool(t, a, "fixed").PaidCost, 4)
}

// TestRunningEntriesCountUpToUntil: a zero End is still running. The
// per-hour worker started 90 min before Until has started its second hour,
// but only the 90 min inside the window are charged here.
func TestRunningEntriesCountUpToUntil(t *testing.T) {
	r := mustCompute(t, Ledger{
		Pools:   []policy.Pool{hourlyPool},
		Workers: []WorkerSpan{{ID: "w", Pool: "hourly", Start: at(0)}},
		Usage:   []Usage{{JobID: "j", Pool: "hourly", Slots: 3, Start: at(30 * m)}},
		From:    at(0),
		Until:   at(90 * m),
	})
	hr := pool(t, r, "hourly")
	// Paid 4 slots × 1.5 h = 6 slot-h at 2; used 3 slots × 1 h.
	checkPaid(t, "hourly", hr.Paid, Paid{PaidSlotHours: 6, PaidCost: 12, IdleSlotHours: 3, IdleCost: 6})
	checkFigures(t, "hourly", hr.Figures, Figures{SlotHours: 3, Cost: 6})
	near(t, "hourly worker-hours", hr.WorkerHours, 1.5)
}
