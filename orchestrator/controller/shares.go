package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/events"
	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/orchestrator/shares"
	"github.com/ballastdev/ballast/queues"
)

// ShareView is the team shares as the leader saw them at its last tick:
// what the share metrics and the console's share bars show. Slots are
// those running on fixed workers.
type ShareView struct {
	At time.Time `json:"at"`
	// Quota is the fixed slots the shares divide.
	Quota int `json:"quota"`
	// Teams are the teams with a share, then those running on fixed
	// without one, by name.
	Teams []TeamShare `json:"teams"`
	// CommonSlots is the quota no share covers; CommonIdle of it is idle.
	CommonSlots int     `json:"common_slots"`
	CommonIdle  float64 `json:"common_idle"`
	// Loans are who uses whose slots (lender "" is common).
	Loans []shares.Loan `json:"loans"`
}

// TeamShare is one team's line of a ShareView.
type TeamShare struct {
	Team string `json:"team"`
	// Share is the team's slots (0 for a team without a share).
	Share int `json:"share"`
	// Used is the slots the team's jobs run on fixed: Own within its
	// share, OnCommon on common slots, Borrowed on common or others'
	// shares (OnCommon included).
	Used     float64 `json:"used"`
	Own      float64 `json:"own"`
	OnCommon float64 `json:"on_common"`
	Borrowed float64 `json:"borrowed"`
	// Lent is the slots of the share others use, LentTo by borrower.
	Lent   float64            `json:"lent"`
	LentTo map[string]float64 `json:"lent_to,omitempty"`
	// Idle is the share's slots nobody uses.
	Idle float64 `json:"idle"`
	// Waiting counts the team's core jobs waiting for fixed slots (held
	// or admitted); OwnerWait is how long the oldest has waited while the
	// team used less than its share: the guarantee's lateness.
	Waiting   int     `json:"waiting"`
	OwnerWait float64 `json:"owner_wait_seconds"`
}

// Shares returns the view of the last tick (the zero view before the first
// tick, and with shares off).
func (h *Hybrid) Shares() ShareView {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.shareView
	v.Teams = slices.Clone(v.Teams)
	v.Loans = slices.Clone(v.Loans)
	return v
}

// weightOf is the slots a whole job holds, as the policy counts them.
func weightOf(j policy.Job) float64 { return float64(max(j.Slots, 1) * max(j.Replicas, 1)) }

// tickShares brings the team usage up to date from the index: each team's
// slots running on fixed feed the decayed usage the policy breaks
// borrowers' ties with, and the view the metrics and the console show.
func (h *Hybrid) tickShares(ix *policy.Index, now time.Time) {
	sc := h.Config.Shares
	if !sc.On() {
		h.mu.Lock()
		h.shareView = ShareView{}
		h.mu.Unlock()
		return
	}
	snap := ix.Snapshot()
	fixed := map[string]bool{}
	for _, p := range h.Pools {
		if p.Kind == policy.PoolFixed {
			fixed[p.Name] = true
		}
	}
	quota := h.Quota
	if quota == 0 {
		for _, w := range snap.Workers {
			if fixed[w.Pool] {
				quota += w.Slots
			}
		}
	}
	used := map[string]float64{}
	oldest := map[string]time.Time{}
	waiting := map[string]int{}
	for _, j := range snap.Jobs {
		if j.Team == "" {
			continue
		}
		switch {
		case j.State == jobs.StateRunning && fixed[j.Pool]:
			used[j.Team] += weightOf(j)
		case j.State == jobs.StateQueued && j.Class == jobs.ClassCore &&
			(j.Queue == policy.QueueHeld || j.Queue == policy.QueueCore):
			waiting[j.Team]++
			if o, ok := oldest[j.Team]; !ok || j.QueuedAt.Before(o) {
				oldest[j.Team] = j.QueuedAt
			}
		}
	}
	split := sc.Split(quota, used)
	v := ShareView{At: now, Quota: quota, CommonSlots: max(quota-sc.Total(), 0), CommonIdle: split.CommonIdle, Loans: split.Loans}
	names := map[string]bool{}
	for _, t := range sc.Teams {
		names[t.Name] = true
	}
	for t := range used {
		names[t] = true
	}
	borrowed, lent := split.Borrowed(), split.Lent()
	for _, name := range slices.Sorted(maps.Keys(names)) {
		t, _ := sc.Team(name)
		ts := TeamShare{Team: name, Share: t.Slots, Used: used[name], Own: split.Own[name], Borrowed: borrowed[name],
			Lent: lent[name], Idle: split.Idle[name], Waiting: waiting[name]}
		for _, l := range split.Loans {
			switch {
			case l.Borrower == name && l.Lender == "":
				ts.OnCommon += l.Slots
			case l.Lender == name && name != "":
				if ts.LentTo == nil {
					ts.LentTo = map[string]float64{}
				}
				ts.LentTo[l.Borrower] += l.Slots
			}
		}
		if o, ok := oldest[name]; ok && used[name] < float64(t.Slots) && !o.IsZero() && now.After(o) {
			ts.OwnerWait = now.Sub(o).Seconds()
		}
		v.Teams = append(v.Teams, ts)
	}
	h.mu.Lock()
	h.decayed.HalfLife = sc.HalfLife
	h.decayed.Add(now, used)
	ix.SetTeamUsage(h.decayed.Usage())
	h.shareView = v
	h.mu.Unlock()
	if h.OnShares != nil {
		h.OnShares(v)
	}
}

// admit carries out rule 9's Admit: a held core job moves to core, fenced
// on the attempt the plan saw, like every move.
func (h *Hybrid) admit(ctx context.Context, a policy.Action) error {
	n, err := h.Store.Move(ctx, a.Job, h.attempt(a.Job), queues.QueueCore, a.Reason)
	h.announceMove(a, n, queues.QueueCore)
	return err
}

// reclaimQueue is where a job reclaimed for another team's share goes:
// a core loan back to held, first in line (the requeue readmits it), so
// rule 9 admits it again when there is room; burst work to its elastic
// queue as any reclaim.
func (h *Hybrid) reclaimQueue(a policy.Action) (queues.Queue, bool) {
	if !h.Config.Shares.On() {
		return "", false
	}
	h.mu.Lock()
	j := h.seen[a.Job]
	h.mu.Unlock()
	if j.Spec.Class != jobs.ClassCore {
		return "", false
	}
	return queues.QueueHeld, true
}

// announceReclaim publishes a reclaim under shares: whose loan stops, for
// whose share, by which rule.
func (h *Hybrid) announceReclaim(a policy.Action, attempt int) {
	if !h.Config.Shares.On() {
		return
	}
	reason := fmt.Sprintf("reclaimed (rule %d: %s)", a.Rule, a.Reason)
	publish(h.Events, h.Logger, events.Reclaimed(a.Job, attempt, a.Worker,
		events.Share{Team: a.Team, Owner: a.Owner, Rule: a.Rule}, reason, time.Now()))
}

// releaseStrayHeld sends back to core the core jobs waiting in held while
// shares are off (turned off since they were held): nothing would admit
// them. Rebuilds find them; the policy sees them no earlier.
func (h *Hybrid) releaseStrayHeld(ctx context.Context) {
	h.mu.Lock()
	stray := h.strayHeld
	h.strayHeld = nil
	h.mu.Unlock()
	for _, s := range stray {
		if _, err := h.Store.Move(ctx, s.id, s.attempt, queues.QueueCore, "shares are off: held work goes to core"); err != nil {
			h.Logger.Warn("held job not sent to core", "job", s.id, "err", err)
		}
		h.Changed(s.id)
	}
}

// noteStrayHeld remembers j for releaseStrayHeld when shares are off and
// it waits in held. Callers hold h.mu.
func (h *Hybrid) noteStrayHeld(j jobs.Job) {
	if !h.Config.Shares.On() && j.State == jobs.StateQueued && queues.Queue(j.Queue) == queues.QueueHeld {
		h.strayHeld = append(h.strayHeld, strayJob{id: j.ID, attempt: j.Attempt})
	}
}

type strayJob struct {
	id      string
	attempt int
}
