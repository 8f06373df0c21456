package shares

import (
	"maps"
	"slices"
	"time"
)

// View is the shares at one instant as people read them: the controller's
// metrics and the console's share bars. Slots are those running on fixed
// workers.
type View struct {
	At time.Time `json:"at"`
	// Quota is the fixed slots the shares divide.
	Quota int `json:"quota"`
	// Teams are the teams with a share, and those running on fixed
	// without one, by name.
	Teams []TeamView `json:"teams"`
	// CommonSlots is the quota no share covers; CommonIdle of it is idle.
	CommonSlots int     `json:"common_slots"`
	CommonIdle  float64 `json:"common_idle"`
	// Loans are who uses whose slots (lender "" is common).
	Loans []Loan `json:"loans"`
}

// TeamView is one team's line of a View.
type TeamView struct {
	Team string `json:"team"`
	// Share is the team's slots (0 for a team without a share).
	Share int `json:"share"`
	// Used is the slots the team's jobs run on fixed: Own within its
	// share, OnCommon on common slots, OnLent on other teams' shares.
	Used     float64 `json:"used"`
	Own      float64 `json:"own"`
	OnCommon float64 `json:"on_common"`
	OnLent   float64 `json:"on_lent"`
	// Lent is the slots of the share others use, LentTo by borrower.
	Lent   float64            `json:"lent"`
	LentTo map[string]float64 `json:"lent_to,omitempty"`
	// Idle is the share's slots nobody uses.
	Idle float64 `json:"idle"`
	// Waiting counts the team's core jobs waiting for fixed slots;
	// OwnerWait is how long the oldest has waited while the team used
	// less than its share: the lateness of its guarantee.
	Waiting   int     `json:"waiting"`
	OwnerWait float64 `json:"owner_wait_seconds"`
}

// Wait is a team's core work waiting for fixed slots at one instant.
type Wait struct {
	Jobs int
	// Oldest is when the longest-waiting job began to wait.
	Oldest time.Time
}

// Add counts one more job waiting since queued (zero: unknown, which
// leaves the oldest as it is).
func (w *Wait) Add(queued time.Time) {
	if !queued.IsZero() && (w.Oldest.IsZero() || queued.Before(w.Oldest)) {
		w.Oldest = queued
	}
	w.Jobs++
}

// ViewOf builds the view at now of a quota of quota slots, from the slots
// each team runs on fixed (used) and the core work each has waiting.
func (c Config) ViewOf(now time.Time, quota int, used map[string]float64, waits map[string]Wait) View {
	split := c.Split(quota, used)
	v := View{At: now, Quota: quota, CommonSlots: max(quota-c.Total(), 0), CommonIdle: split.CommonIdle,
		Loans: split.Loans, Teams: []TeamView{}}
	names := map[string]bool{}
	for _, t := range c.Teams {
		names[t.Name] = true
	}
	for t, u := range used {
		if u > 0 {
			names[t] = true
		}
	}
	borrowed, lent := split.Borrowed(), split.Lent()
	for _, name := range slices.Sorted(maps.Keys(names)) {
		t, _ := c.Team(name)
		tv := TeamView{Team: name, Share: t.Slots, Used: used[name], Own: split.Own[name], Lent: lent[name],
			Idle: split.Idle[name], Waiting: waits[name].Jobs}
		for _, l := range split.Loans {
			switch {
			case l.Borrower == name && l.Lender == "":
				tv.OnCommon += l.Slots
			case l.Lender == name:
				if tv.LentTo == nil {
					tv.LentTo = map[string]float64{}
				}
				tv.LentTo[l.Borrower] += l.Slots
			}
		}
		tv.OnLent = borrowed[name] - tv.OnCommon
		if w := waits[name]; w.Jobs > 0 && used[name] < float64(t.Slots) && !w.Oldest.IsZero() && now.After(w.Oldest) {
			tv.OwnerWait = now.Sub(w.Oldest).Seconds()
		}
		v.Teams = append(v.Teams, tv)
	}
	return v
}
