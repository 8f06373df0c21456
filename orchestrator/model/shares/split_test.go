package shares

import (
	"fmt"
	"math"
	"testing"
)

// Split is used by the ledger, which must give the same figures every
// time it is run on the same records: the split must not depend on the
// order Go happens to walk a map in, down to the last bit.
func TestSplitIsDeterministic(t *testing.T) {
	c := Config{}
	for i := range 7 {
		c.Teams = append(c.Teams, Team{Name: fmt.Sprintf("t%d", i), Slots: 3 + i, LendLimit: 1 + i})
	}
	used := map[string]float64{"t6": 9.1, "t0": 0.3}
	for i := range 9 {
		// Borrowers without a share, with sums that round differently in
		// different orders.
		used[fmt.Sprintf("x%d", i)] = 0.1 + float64(i)/3
	}
	first := c.Split(c.Total()+5, used)
	for range 200 {
		again := c.Split(c.Total()+5, used)
		if len(again.Loans) != len(first.Loans) {
			t.Fatalf("%d loans, then %d", len(first.Loans), len(again.Loans))
		}
		for i, l := range again.Loans {
			if l != first.Loans[i] {
				t.Fatalf("loan %d: %+v, then %+v", i, first.Loans[i], l)
			}
		}
		for name, v := range again.Idle {
			if v != first.Idle[name] {
				t.Fatalf("idle of %s: %v, then %v", name, first.Idle[name], v)
			}
		}
	}
	// Every slot used is own or borrowed, and every slot of the quota is
	// used, lent or idle.
	var sum, own, lent, idle float64
	for _, u := range used {
		sum += u
	}
	for _, v := range first.Own {
		own += v
	}
	for _, v := range first.Borrowed() {
		lent += v
	}
	for _, v := range first.Idle {
		idle += v
	}
	if math.Abs(own+lent-sum) > 1e-9 {
		t.Errorf("own %v + borrowed %v != used %v", own, lent, sum)
	}
	if total := own + lent + idle + first.CommonIdle; math.Abs(total-float64(c.Total()+5)) > 1e-9 {
		t.Errorf("own, borrowed and idle add up to %v, not the quota %d", total, c.Total()+5)
	}
}
