package cost

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// TestBadInputIsNamed breaks the mixed ledger one way at a time; each
// error must name the entry (its index and ID) and what is wrong.
func TestBadInputIsNamed(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(*Ledger)
		want  []string
	}{
		{"usage on unknown pool", func(l *Ledger) { l.Usage[2].Pool = "gpu" },
			[]string{"usage[2].pool", `job "a2"`, `pool "gpu" is unknown`}},
		{"worker on unknown pool", func(l *Ledger) { l.Workers[1].Pool = "gpu" },
			[]string{"workers[1].pool", `worker "od-2"`, `pool "gpu" is unknown`}},
		{"worker ends before it starts", func(l *Ledger) { l.Workers[3].End = at(-time.Minute) },
			[]string{"workers[3].end", `worker "spot-1"`, "before start"}},
		{"usage ends before it starts", func(l *Ledger) { l.Usage[5].End = l.Usage[5].Start.Add(-time.Second) },
			[]string{"usage[5].end", `job "b3"`, "before start"}},
		{"window ends before it starts", func(l *Ledger) { l.Until = at(-h) },
			[]string{"ledger.until", "before from"}},
		{"window without start", func(l *Ledger) { l.From = time.Time{} },
			[]string{"ledger.from", "zero"}},
		{"negative worker slots", func(l *Ledger) { l.Workers[6].Slots = -4 },
			[]string{"workers[6].slots", `worker "hourly-1"`, "-4 slots is negative"}},
		{"negative usage slots", func(l *Ledger) { l.Usage[0].Slots = -1 },
			[]string{"usage[0].slots", `job "a1"`, "-1 slots"}},
		{"negative quota slots", func(l *Ledger) { l.Quotas[0].Slots = -1 },
			[]string{"quotas[0].slots", `quota of pool "fixed"`, "negative"}},
		{"quota of an elastic pool", func(l *Ledger) { l.Quotas = append(l.Quotas, Quota{Pool: "spot", Slots: 1}) },
			[]string{"quotas[1].pool", `pool "spot"`, "not fixed"}},
		{"worker on the fixed pool", func(l *Ledger) { l.Workers[0].Pool = "fixed" },
			[]string{"workers[0].pool", `worker "od-1"`, "only elastic workers"}},
		{"fixed pool without quota", func(l *Ledger) { l.Quotas = nil },
			[]string{"usage[0].pool", `job "a1"`, "no quota"}},
		{"duplicate worker ID", func(l *Ledger) { l.Workers[2].ID = "od-1" },
			[]string{"workers[2].id", `worker "od-1"`, "workers[0]"}},
		{"duplicate pool", func(l *Ledger) { l.Pools = append(l.Pools, odPool) },
			[]string{"pools[4].name", `pool "od" is listed twice`}},
		{"unknown billing", func(l *Ledger) { l.Pools[2].Billing = "per_fortnight" },
			[]string{"pools[2].billing", `pool "od"`, `"per_fortnight" is unknown`}},
		{"job changes team", func(l *Ledger) { l.Usage[6].Team = "gamma" },
			[]string{"usage[6]", `job "b3"`, `"gamma"`, "usage[5]"}},
		{"lost work longer than the attempt", func(l *Ledger) { l.Usage[5].LostWork = 91 * s },
			[]string{"usage[5].lost_work", `job "b3"`, "longer than the attempt's 1m30s"}},
		{"negative lost work", func(l *Ledger) { l.Usage[5].LostWork = -s },
			[]string{"usage[5].lost_work", `job "b3"`, "negative"}},
		// od-2 is gone by 10:11:01; b2 running on to 10:12 has no worker.
		{"elastic usage no worker covers", func(l *Ledger) { l.Usage[3].End = at(12 * m) },
			[]string{"usage[3]", `job "b2"`, `no worker span of pool "od" covers 2025-03-10T00:11:01Z`}},
		// a5 with 3 slots makes 9 on the hourly workers' 8 from 00:10.
		{"elastic pool overbooked", func(l *Ledger) { l.Usage[10].Slots = 3 },
			[]string{"usage[10]", `job "a5"`, `pool "hourly" has 9 slots in use at 2025-03-10T00:10:00Z but 8 on its workers`}},
		{"quota overbooked", func(l *Ledger) { l.Usage[1].Slots = 3 },
			[]string{"usage[1]", `job "b1"`, `pool "fixed" has 5 slots in use at 2025-03-10T00:30:00Z but a quota of 4`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := mixedLedger()
			c.spoil(&l)
			_, err := Compute(l)
			if err == nil {
				t.Fatal("Compute accepted the ledger")
			}
			var ve *jobs.ValidationError
			if !errors.As(err, &ve) {
				t.Errorf("error %T is not a *jobs.ValidationError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestEveryProblemIsReported: a caller fixes a ledger in one round.
func TestEveryProblemIsReported(t *testing.T) {
	l := mixedLedger()
	l.Usage[0].Pool = "gpu"
	l.Workers[0].End = at(-m)
	l.Quotas[0].PricePerSlotHour = -1
	_, err := Compute(l)
	var ve *jobs.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 3 {
		t.Fatalf("error = %v, want the three problems", err)
	}
}

// TestCoverageIsCheckedInsideTheWindowOnly: workers outside the window
// need not be listed, so an attempt's part outside the window is not held
// against it.
func TestCoverageIsCheckedInsideTheWindowOnly(t *testing.T) {
	pl := policy.Pool{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 1,
		Billing: policy.BillingPerSecond, SlotsPerWorker: 1}
	l := Ledger{
		Pools:   []policy.Pool{pl},
		Workers: []WorkerSpan{{ID: "w", Pool: "od", Start: at(h), End: at(3 * h)}},
		Usage:   []Usage{{JobID: "j", Pool: "od", Slots: 1, Start: at(0), End: at(2 * h)}},
		From:    at(h),
		Until:   at(2 * h),
	}
	r := mustCompute(t, l)
	checkFigures(t, "j", job(t, r, "j").Figures, Figures{SlotHours: 1, Cost: 1})
	l.From = at(0)
	if _, err := Compute(l); err == nil || !strings.Contains(err.Error(), `no worker span of pool "od" covers 2025-03-10T00:00:00Z`) {
		t.Errorf("error = %v, want the uncovered first hour", err)
	}
}
