package cost

import (
	"testing"
)

// FixedUse on the settlement fixture: alpha holds 1 slot all 10 h, beta 3
// slots for 4 h and none for 6, the jobs without a team 1 slot for 2 h.
func TestFixedUseByHand(t *testing.T) {
	us, err := FixedUse(settleLedger(), settleShares)
	if err != nil {
		t.Fatal(err)
	}
	use := func(name string) TeamUse {
		return row(t, us, func(u TeamUse) string { return u.Team }, name)
	}
	a, b, x := use("alpha"), use("beta"), use("")
	near(t, "alpha own idle", a.OwnIdle(), 0.5)
	near(t, "alpha lent", a.LentSlotHours, 4)
	near(t, "alpha share slot-hours", a.ShareSlotHours, 20)
	near(t, "beta own idle", b.OwnIdle(), 0.6)
	near(t, "no team own idle", x.OwnIdle(), 0)
	for _, c := range []struct {
		u    TeamUse
		p    float64
		want float64
	}{
		{a, 0.9, 1}, {a, 0, 1},
		{b, 0.5, 0}, {b, 0.6, 0}, {b, 0.61, 3}, {b, 1, 3},
		{x, 0.8, 0}, {x, 0.9, 1},
	} {
		near(t, c.u.Team+" quantile "+formatP(c.p), c.u.Quantile(c.p), c.want)
	}
	var hours float64
	for _, l := range b.Levels {
		hours += l.Hours
	}
	near(t, "beta's levels cover the window", hours, 10)
	if len(b.Levels) != 2 || b.Levels[0].Slots != 0 || b.Levels[1].Slots != 3 {
		t.Errorf("beta's levels %+v, want 0 then 3 slots", b.Levels)
	}
}

func formatP(p float64) string { return hours(p) }
