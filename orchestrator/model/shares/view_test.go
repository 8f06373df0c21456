package shares

import (
	"testing"
	"time"
)

// TestViewOf: on a 6-slot quota with shares a 2 and b 2 (2 common), a
// running on 5 slots holds its share, both common slots and one of b's;
// b, owed its share, shows how long its oldest job has waited.
func TestViewOf(t *testing.T) {
	c := Config{Teams: []Team{{Name: "a", Slots: 2, LendLimit: 2, BorrowLimit: 6}, {Name: "b", Slots: 2, LendLimit: 2, BorrowLimit: 6}}}
	now := time.Unix(1000, 0)
	var w Wait
	w.Add(time.Time{}) // an unknown wait start leaves the oldest as is
	w.Add(now.Add(-5 * time.Second))
	w.Add(now.Add(-9 * time.Second))
	v := c.ViewOf(now, 6, map[string]float64{"a": 5}, map[string]Wait{"b": w})
	if v.Quota != 6 || v.CommonSlots != 2 || v.CommonIdle != 0 || len(v.Teams) != 2 {
		t.Fatalf("view %+v", v)
	}
	a, b := v.Teams[0], v.Teams[1]
	if a.Own != 2 || a.OnCommon != 2 || a.OnLent != 1 || a.Used != 5 || a.Lent != 0 {
		t.Errorf("a %+v", a)
	}
	if b.Lent != 1 || b.LentTo["a"] != 1 || b.Idle != 1 || b.Waiting != 3 || b.OwnerWait != 9 {
		t.Errorf("b %+v", b)
	}
	// A team over its share is not owed: no owner wait.
	v = c.ViewOf(now, 6, map[string]float64{"b": 3}, map[string]Wait{"b": w})
	if b := v.Teams[1]; b.OwnerWait != 0 || b.Waiting != 3 {
		t.Errorf("b over its share: %+v", b)
	}
}
