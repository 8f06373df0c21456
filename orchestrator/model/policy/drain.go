package policy

import (
	"cmp"
	"fmt"
	"slices"
)

// drain is the last part of rule 4: below the low watermark, elastic
// workers that still hold work stop taking more, so they empty (their
// checkpointable jobs are migrating, the rest finish where they are) and
// rule 5 releases them at once. A pool keeps enough free slots on the
// workers that stay for the queued work placed on it. The workers
// with least left to finish go first. Idle workers are not drained: rule 5
// releases them when their paid time runs out, and until then they cost
// nothing extra to keep. Nothing is drained between the watermarks (rule 6).
func (p *planner) drain() {
	if p.regime != cool {
		return
	}
	type cand struct {
		w    *workerRec
		left int
	}
	for _, d := range p.elastic {
		if d.bins > 0 {
			continue // sized work waits for new workers here: keep these
		}
		var cands []cand
		for _, w := range p.ix.byPool[d.pool.Name] {
			// A worker holding slots for a placed job that has not
			// started is not drained: draining takes its placement back,
			// and rule 8 would only place the job again.
			if w.State == WorkerUp && !p.idle(w) && p.use(w).held == 0 && p.tickSlots(w) == 0 {
				left := p.staying(w)
				cands = append(cands, cand{w, left})
			}
		}
		slices.SortFunc(cands, func(a, b cand) int { return cmp.Or(cmp.Compare(a.left, b.left), cmp.Compare(a.w.ID, b.w.ID)) })
		for _, c := range cands {
			// Draining takes the worker's free slots out of the pool and
			// counts it against the maximum until it empties.
			free := d.slots() - c.left
			if d.spare() < free || d.headroom() < free {
				continue
			}
			// A share counted into its gap would have nowhere to go.
			if d.gotGap(c.w) {
				continue
			}
			d.dropGaps(c.w)
			d.active--
			d.draining++
			d.running -= c.left
			p.scr.drained = append(p.scr.drained, c.w)
			p.add(Action{
				Kind: Drain, Worker: c.w.ID, Pool: d.pool.Name, Rule: 4,
				Reason: fmt.Sprintf("fixed utilization with queued work %s < low %.2f; %d jobs left to finish here; %d spare slots stay for %d queued",
					p.ratio(p.fixed.Busy+p.coreQueued.slots()+p.loans.slots()), p.cfg.Low, c.left, d.spare(), d.queued),
			}, nil)
		}
	}
}

// staying counts the slots on w that stay held there: not migrating or
// reclaimed, in flight or this tick. Shares that stay count as the whole
// slots their sum fills, as the index counts them on the next tick.
func (p *planner) staying(w *workerRec) int {
	var u slotUse // the record's own, shares apart
	if w.use != nil {
		u = *w.use
	}
	n := u.used - u.leaving + u.held + p.tickSlots(w)
	shared := u.shared - u.sharedLeaving
	for _, j := range w.jobs {
		if _, moved := p.moved[j.ID]; moved && j.running() && j.PendingAction == "" {
			if j.Share > 0 {
				shared -= int64(j.Share)
			} else {
				n -= j.slotsOn(w.ID)
			}
		}
	}
	return n + wholeOf(shared)
}
