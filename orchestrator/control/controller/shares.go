package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/queues"
)

// ShareView is the team shares as the leader saw them at its last tick.
type ShareView = shares.View

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
	used, slots := ix.FixedTeamUse()
	quota := h.Quota
	if quota == 0 {
		quota = slots
	}
	waits := ix.CoreWaits()
	v := sc.ViewOf(now, quota, used, waits)
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
// on the attempt the plan saw, like every move. The store remembers the
// admission, so a requeue that is no reclaim (its worker died, left or
// drained) sends the job back to held, first in line, not past rule 9 to
// core.
func (h *Hybrid) admit(ctx context.Context, a policy.Action) error {
	n, err := h.Store.AdmitHeld(ctx, a.Job, h.attempt(a.Job), a.Reason)
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
