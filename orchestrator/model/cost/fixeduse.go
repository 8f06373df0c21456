package cost

import (
	"cmp"
	"maps"
	"slices"

	teamshares "github.com/ballastdev/ballast/orchestrator/model/shares"
)

// TeamUse is one team's use of the fixed quota over a window, as the
// settlement sweeps it: what sizing a share needs (advise, plan).
type TeamUse struct {
	Team string `json:"team"`
	// Share is the team's share in slots now; zero without one.
	Share int `json:"share"`
	// ShareSlotHours is the share over the window, OwnSlotHours the part
	// of it the team used itself, LentSlotHours the part others used.
	ShareSlotHours float64 `json:"share_slot_hours"`
	OwnSlotHours   float64 `json:"own_slot_hours"`
	LentSlotHours  float64 `json:"lent_slot_hours"`
	// Hours is the window; Levels the time the team held each level of
	// fixed usage (slots, anywhere on the quota), lowest first, adding up
	// to Hours.
	Hours  float64 `json:"hours"`
	Levels []Level `json:"levels"`
}

// Level is the time a team held a number of fixed slots.
type Level struct {
	Slots float64 `json:"slots"`
	Hours float64 `json:"hours"`
}

// OwnIdle is the part of the share's time the team did not use itself
// (lent or idle); zero without a share.
func (u TeamUse) OwnIdle() float64 {
	if u.ShareSlotHours <= 0 {
		return 0
	}
	return 1 - u.OwnSlotHours/u.ShareSlotHours
}

// Quantile is the fewest slots the team's fixed usage stayed at or below
// for at least the fraction p of the window: Quantile(0.9) is a share
// that covers its use nine tenths of the time.
func (u TeamUse) Quantile(p float64) float64 {
	var total float64
	for _, l := range u.Levels {
		total += l.Hours
	}
	var acc float64
	for _, l := range u.Levels {
		acc += l.Hours
		// A hair of tolerance, so p = 1 reaches the top level despite
		// rounding in the sums.
		if acc >= p*total-1e-9*total {
			return l.Slots
		}
	}
	return 0
}

// FixedUse is each team's use of the fixed quota over the ledger's
// window, by team name (jobs without a team are ""), for the teams of sh
// and every team with a fixed attempt. The error is Settle's.
func FixedUse(l Ledger, sh teamshares.Config) ([]TeamUse, error) {
	b, err := check(l)
	if err != nil {
		return nil, err
	}
	quota := 0
	for _, q := range b.quotas {
		quota += q.Slots
	}
	rows := b.sweep(sh, quota)
	delete(rows, commonKey)
	hours := b.until.Sub(b.from).Hours()
	out := make([]TeamUse, 0, len(rows))
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		t := rows[name]
		u := TeamUse{Team: name, Share: t.Share, ShareSlotHours: float64(t.Share) * hours, OwnSlotHours: t.OwnSlotHours,
			Hours: hours}
		for _, f := range flows(t.lent, 0) {
			u.LentSlotHours += f.SlotHours
		}
		for milli, h := range t.levels {
			u.Levels = append(u.Levels, Level{Slots: float64(milli) / 1000, Hours: h})
		}
		slices.SortFunc(u.Levels, func(x, y Level) int { return cmp.Compare(x.Slots, y.Slots) })
		out = append(out, u)
	}
	return out, nil
}
