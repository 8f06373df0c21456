package cost

import (
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// Attempts that share a GPU are billed at their share and fill a slot
// together: two quarter-GPU jobs and a half on a one-slot quota for an
// hour use 1 slot-hour and fit; a second half does not.
func TestSharesAreBilledAtTheirShare(t *testing.T) {
	fixed := policy.Pool{Name: "fixed", Kind: policy.PoolFixed, PricePerSlotHour: 2}
	share := func(id string, milli int) Usage {
		return Usage{JobID: id, Pool: "fixed", Slots: 1, Share: milli, Start: at(0), End: at(60 * m)}
	}
	l := Ledger{Pools: []policy.Pool{fixed}, Quotas: []Quota{{Pool: "fixed", Slots: 1, PricePerSlotHour: 2}},
		Usage: []Usage{share("a", 250), share("b", 250), share("c", 500)}, From: at(0), Until: at(60 * m)}
	r := mustCompute(t, l)
	// Used 0.25 + 0.25 + 0.5 = 1 slot-hour at 2; the quota is full.
	f := pool(t, r, "fixed")
	checkFigures(t, "fixed", f.Figures, Figures{SlotHours: 1, Cost: 2})
	checkPaid(t, "fixed", f.Paid, Paid{PaidSlotHours: 1, PaidCost: 2})
	l.Usage = append(l.Usage, share("d", 500))
	if _, err := Compute(l); err == nil || !strings.Contains(err.Error(), "1.5 slots in use") {
		t.Errorf("a GPU and a half on a one-slot quota: %v", err)
	}
	l.Usage = []Usage{share("a", 1500)}
	if _, err := Compute(l); err == nil || !strings.Contains(err.Error(), "share") {
		t.Errorf("a share of 1.5 GPUs: %v", err)
	}
}
