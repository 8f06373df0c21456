package cost

import (
	"math"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// t0 is midnight UTC; the fixtures' times are offsets from it.
var t0 = time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// s is a number of seconds, m of minutes: hand calculations below read
// more easily in the units the billing uses.
const (
	s = time.Second
	m = time.Minute
	h = time.Hour
)

const tolerance = 1e-9

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > tolerance {
		t.Errorf("%s = %.12f, want %.12f", what, got, want)
	}
}

func checkFigures(t *testing.T, what string, got, want Figures) {
	t.Helper()
	near(t, what+" slot-hours", got.SlotHours, want.SlotHours)
	near(t, what+" cost", got.Cost, want.Cost)
	near(t, what+" lost slot-hours", got.LostSlotHours, want.LostSlotHours)
	near(t, what+" lost cost", got.LostCost, want.LostCost)
	near(t, what+" premium", got.Premium, want.Premium)
}

func checkPaid(t *testing.T, what string, got, want Paid) {
	t.Helper()
	near(t, what+" paid slot-hours", got.PaidSlotHours, want.PaidSlotHours)
	near(t, what+" paid cost", got.PaidCost, want.PaidCost)
	near(t, what+" idle slot-hours", got.IdleSlotHours, want.IdleSlotHours)
	near(t, what+" idle cost", got.IdleCost, want.IdleCost)
}

func mustCompute(t *testing.T, l Ledger) Report {
	t.Helper()
	r, err := Compute(l)
	if err != nil {
		t.Fatalf("Compute: %v", err)
	}
	return r
}

// row returns the row of rows whose key is want, failing the test without one.
func row[R any](t *testing.T, rows []R, key func(R) string, want string) R {
	t.Helper()
	for _, r := range rows {
		if key(r) == want {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", want, rows)
	var zero R
	return zero
}

func pool(t *testing.T, r Report, name string) PoolRow {
	t.Helper()
	return row(t, r.Pools, func(p PoolRow) string { return p.Pool }, name)
}

func groupRow(t *testing.T, rows []GroupRow, name string) GroupRow {
	t.Helper()
	return row(t, rows, func(g GroupRow) string { return g.Name }, name)
}

func job(t *testing.T, r Report, id string) JobRow {
	t.Helper()
	return row(t, r.Jobs, func(j JobRow) string { return j.JobID }, id)
}

func day(t *testing.T, r Report, key string) DayRow {
	t.Helper()
	return row(t, r.Days, func(d DayRow) string { return d.Day }, key)
}

// The mixed fixture's pools: one of each billing granularity, plus quota.
var (
	fixedPool = policy.Pool{Name: "fixed", Kind: policy.PoolFixed,
		// Deliberately not the quota's price: the quota prices fixed slots.
		PricePerSlotHour: 99}
	odPool = policy.Pool{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 3,
		Billing: policy.BillingPerSecond, MinBilling: 60 * s, SlotsPerWorker: 2}
	spotPool = policy.Pool{Name: "spot", Kind: policy.PoolSpot, PricePerSlotHour: 1.5,
		Billing: policy.BillingPerMinute, SlotsPerWorker: 1}
	hourlyPool = policy.Pool{Name: "hourly", Kind: policy.PoolOnDemand, PricePerSlotHour: 2,
		Billing: policy.BillingPerHour, SlotsPerWorker: 4}
)

// mixedLedger is two hours with a 4-slot quota at 1 per slot-hour and
// elastic workers billed per second (60 s minimum), per minute and per
// hour. Every attempt fits its pool at every instant.
func mixedLedger() Ledger {
	u := func(job, team, tmpl, pool string, slots int, from, to, lost time.Duration) Usage {
		return Usage{JobID: job, Team: team, Template: tmpl, Pool: pool, Slots: slots,
			Start: at(from), End: at(to), LostWork: lost}
	}
	return Ledger{
		Pools:  []policy.Pool{fixedPool, hourlyPool, odPool, spotPool},
		Quotas: []Quota{{Pool: "fixed", Slots: 4, PricePerSlotHour: 1}},
		Workers: []WorkerSpan{
			// Slots zero: the pool's SlotsPerWorker (2 for od, 1 for spot).
			{ID: "od-1", Pool: "od", Start: at(0), End: at(30 * s)},
			{ID: "od-2", Pool: "od", Start: at(10 * m), End: at(10*m + 61*s)},
			{ID: "od-3", Pool: "od", Start: at(20 * m), End: at(21*m + 30*s)},
			{ID: "spot-1", Pool: "spot", Start: at(0), End: at(90 * s)},
			{ID: "spot-2", Pool: "spot", Start: at(30 * m), End: at(89 * m)},
			{ID: "spot-3", Pool: "spot", Start: at(5 * m), End: at(6*m + 1*s)},
			{ID: "hourly-1", Pool: "hourly", Slots: 4, Start: at(0), End: at(59 * m)},
			{ID: "hourly-2", Pool: "hourly", Slots: 4, Start: at(0), End: at(61 * m)},
		},
		Usage: []Usage{
			u("a1", "alpha", "etl", "fixed", 2, 0, 60*m, 0),
			u("b1", "beta", "train", "fixed", 1, 30*m, 120*m, 6*m),
			u("a2", "alpha", "etl", "od", 2, 0, 30*s, 0),
			u("b2", "beta", "train", "od", 1, 10*m, 10*m+61*s, 0),
			u("a3", "alpha", "train", "od", 2, 20*m, 21*m+30*s, 0),
			// b3 is reclaimed twice on spot, then finishes.
			u("b3", "beta", "etl", "spot", 1, 0, 90*s, 45*s),
			u("b3", "beta", "etl", "spot", 1, 5*m, 6*m+1*s, 61*s),
			u("b3", "beta", "etl", "spot", 1, 30*m, 89*m, 0),
			u("a4", "alpha", "train", "hourly", 4, 0, 59*m, 0),
			u("b4", "beta", "train", "hourly", 2, 0, 61*m, 0),
			u("a5", "alpha", "etl", "hourly", 2, 10*m, 40*m, 0),
		},
		From:  at(0),
		Until: at(2 * h),
	}
}
