package shares

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func abc() Config {
	return Config{Teams: []Team{
		{Name: "a", Slots: 8, LendLimit: 8, BorrowLimit: 16, ReclaimWithin: time.Minute},
		{Name: "b", Slots: 4, LendLimit: 4, BorrowLimit: 16, ReclaimWithin: time.Minute},
		{Name: "c", Slots: 4, LendLimit: 2, BorrowLimit: 16, ReclaimWithin: time.Minute},
	}}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSplitOwnerBorrowsIdleShares(t *testing.T) {
	// a runs 14 of 16: 8 in share, 6 borrowed from b (4 lendable) and c
	// (2 lendable, past that its limit), in proportion.
	s := abc().Split(16, map[string]float64{"a": 14})
	if !near(s.Own["a"], 8) {
		t.Fatalf("own a = %v, want 8", s.Own["a"])
	}
	lent := s.Lent()
	if !near(lent["b"], 4) || !near(lent["c"], 2) || lent[""] != 0 {
		t.Fatalf("lent = %v, want b 4, c 2", lent)
	}
	if !near(s.Idle["c"], 2) || !near(s.Idle["b"], 0) {
		t.Fatalf("idle = %v", s.Idle)
	}
}

func TestSplitCommonFirstThenPastLimit(t *testing.T) {
	c := abc()
	// 20 slots: 4 common. a uses 8+4+... = 17: 4 from common, 5 from b and c.
	s := c.Split(20, map[string]float64{"a": 17})
	lent := s.Lent()
	if !near(lent[""], 4) {
		t.Fatalf("common lent %v, want 4 first", lent[""])
	}
	// Lendable b 4 and c 2 cover 5 in proportion 4:2.
	if !near(lent["b"], 5*4.0/6) || !near(lent["c"], 5*2.0/6) {
		t.Fatalf("lent = %v", lent)
	}
	// Beyond the lend limits (a reclaim under way): c's past-limit idle.
	s = c.Split(20, map[string]float64{"a": 19})
	lent = s.Lent()
	if !near(lent["b"], 4) || !near(lent["c"], 3) {
		t.Fatalf("past limit, lent = %v, want b 4 and c 3", lent)
	}
}

func TestSplitTeamWithoutShareBorrowsAll(t *testing.T) {
	s := abc().Split(16, map[string]float64{"x": 2, "a": 8})
	b := s.Borrowed()
	if !near(b["x"], 2) || b["a"] != 0 {
		t.Fatalf("borrowed = %v, want x 2", b)
	}
}

// TestSplitAccountsForEverySlot checks on random use that the split adds
// up: own + borrowed = used for every team, own + lent + idle = share,
// and lent common + common idle = the common slots.
func TestSplitAccountsForEverySlot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var c Config
		quota := 0
		for i := range 2 + r.IntN(5) {
			sl := r.IntN(9)
			c.Teams = append(c.Teams, Team{Name: string(rune('a' + i)), Slots: sl, LendLimit: r.IntN(sl + 1)})
			quota += sl
		}
		quota += r.IntN(5)
		used := map[string]float64{}
		left := float64(quota)
		for _, tm := range c.Teams {
			u := math.Min(left, float64(r.IntN(12))+0.5*float64(r.IntN(2)))
			used[tm.Name] = u
			left -= u
		}
		used["nobody"] = math.Min(left, float64(r.IntN(3)))
		s := c.Split(quota, used)
		b, l := s.Borrowed(), s.Lent()
		for name, u := range used {
			if !near(s.Own[name]+b[name], u) {
				t.Fatalf("%s: own %v + borrowed %v != used %v (%+v)", name, s.Own[name], b[name], u, s)
			}
		}
		for _, tm := range c.Teams {
			if !near(s.Own[tm.Name]+l[tm.Name]+s.Idle[tm.Name], float64(tm.Slots)) || s.Idle[tm.Name] < -1e-9 {
				t.Fatalf("%s: own %v + lent %v + idle %v != share %d", tm.Name, s.Own[tm.Name], l[tm.Name], s.Idle[tm.Name], tm.Slots)
			}
		}
		common := float64(quota - c.Total())
		if !near(l[""]+s.CommonIdle, common) {
			t.Fatalf("common lent %v + idle %v != %v", l[""], s.CommonIdle, common)
		}
		for _, loan := range s.Loans {
			if loan.Borrower == loan.Lender {
				t.Fatalf("%s lends to itself", loan.Borrower)
			}
		}
	}
}

func TestValidateNamesEveryProblem(t *testing.T) {
	c := Config{Teams: []Team{
		{Name: "a", Slots: 10, LendLimit: 11, ReclaimWithin: time.Second},
		{Name: "a", Slots: 4, BorrowLimit: 99, Weight: -1, ReclaimWithin: time.Minute},
	}}
	err := c.Validate(12, time.Second)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"named twice", "lend_limit", "borrow_limit", "weight", "reclaim_within", "add up to 14"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if err := abc().Validate(16, time.Second); err != nil {
		t.Fatalf("valid shares refused: %v", err)
	}
}

func TestFairOrderByWeightedBorrowThenDecayedUsage(t *testing.T) {
	c := Config{Teams: []Team{{Name: "a", Weight: 2}, {Name: "b"}, {Name: "c"}}}
	teams := []string{"c", "b", "a"}
	// a borrows 4 at weight 2 (2 per weight), b 2, c 2: all tie on 2,
	// so the decayed usage orders them.
	c.FairOrder(teams, map[string]float64{"a": 4, "b": 2, "c": 2}, map[string]float64{"b": 10, "c": 5, "a": 0})
	if got := strings.Join(teams, ","); got != "a,c,b" {
		t.Fatalf("order %s, want a,c,b", got)
	}
	teams = []string{"a", "b", "c"}
	c.FairOrder(teams, map[string]float64{"a": 6, "b": 2, "c": 2}, map[string]float64{"b": 10, "c": 5})
	if got := strings.Join(teams, ","); got != "c,b,a" {
		t.Fatalf("order %s, want c,b,a", got)
	}
}

func TestDecayedHalvesEachHalfLife(t *testing.T) {
	d := Decayed{HalfLife: time.Hour}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d.Add(t0, nil)
	d.Add(t0.Add(time.Hour), map[string]float64{"a": 2})
	// 2 slots for an hour: 7200 slot-seconds, recorded at the end.
	if u := d.Usage()["a"]; !near(u, 7200) {
		t.Fatalf("usage %v, want 7200", u)
	}
	d.Add(t0.Add(2*time.Hour), nil)
	if u := d.Usage()["a"]; !near(u, 3600) {
		t.Fatalf("after a half-life: %v, want 3600", u)
	}
	// Time going backwards changes nothing.
	d.Add(t0, map[string]float64{"a": 100})
	if u := d.Usage()["a"]; !near(u, 3600) {
		t.Fatalf("after a clock step back: %v, want 3600", u)
	}
}
