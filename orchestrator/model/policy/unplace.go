package policy

import (
	"fmt"
	"slices"
	"strings"
)

// unplace is the part of rule 8 that takes back placements nothing will
// start: a queued placed job with a worker that is gone, draining, or
// reads no place queue of its own (Worker.NoPlacedWork) waits there for
// ever. It is planned as Unplace, and the job goes back to wait in its
// queue, to be placed again as a new attempt once the move lands.
//
// Why here and first: the take-back is a decision like any other, so the
// simulator sees it, a plan prints it, and Apply records it. Every rule
// after it counts the job as unplaced this tick (its held slots free, its
// slots queued for its queue again), and the job itself as moved, so it
// is placed again next tick, not this one: a fenced Place of the attempt
// the move ends would be dropped. A job with the take-back in flight
// (Unplace pending) is counted the same way and planned nothing, so a
// plan with it pending plans no more.
func (p *planner) unplace() {
	if len(p.ix.placed) == 0 {
		return
	}
	var orphans []*Job
	for r := range p.ix.placed {
		if r.PendingAction == Unplace || (r.free() && (len(p.strayWorkers(r.Job)) > 0 || p.heldPastWait(r.Job))) {
			orphans = append(orphans, r.Job)
		}
	}
	// In queue order, whatever the map's: plans are deterministic.
	slices.SortFunc(orphans, byQueueOrder)
	for _, j := range orphans {
		for _, id := range j.Placed {
			if w := p.worker[id]; w != nil {
				p.give(w, j)
			}
		}
		switch j.Queue {
		case QueueCore:
			p.coreQueued.add(j)
		case QueueLoan:
			p.loans.add(j)
		}
		if j.PendingAction == Unplace {
			continue
		}
		reason := fmt.Sprintf("held on %s for %s, past its max wait %s: it goes to on-demand capacity instead (rule 7)",
			strings.Join(j.Placed, ","), p.now.Sub(j.QueuedAt), j.maxWait(p.cfg))
		if stray := p.strayWorkers(j); len(stray) > 0 {
			reason = fmt.Sprintf("placed on %s, which takes no placed work now (%s)", strings.Join(j.Placed, ","), strings.Join(stray, ", "))
		}
		p.add(Action{Kind: Unplace, Job: j.ID, Queue: j.Queue, Workers: slices.Clone(j.Placed), Rule: 8, Reason: reason}, j)
	}
	p.settleRegime()
}

// heldPastWait reports whether core job j, held on a fixed worker for
// slots that are not free yet, has waited past its allowed delay with
// core overflow on and an on-demand pool whose machines may run it: its
// reservation is taken back, and rule 8 makes no other for it
// (overflowInstead), so rule 7 sends it on. A job of a flavor or size
// whose quota is full would otherwise wait for a slot of that quota as
// long as the work on it runs, hours or weeks, whatever core_max_wait
// says. A job whose slots are free now is about to start, and a gang's
// members start together on several workers: both are left held.
func (p *planner) heldPastWait(j *Job) bool {
	if j.gang() || len(j.Placed) != 1 || !p.overflowInstead(j) {
		return false
	}
	w := p.worker[j.Placed[0]]
	if w == nil {
		return false
	}
	// The worker's own count too: core work running on the quota may be
	// left out of the records the index holds.
	used, _ := p.usedHeld(w)
	return max(w.Busy, used)+j.slots() > w.Slots
}

// strayWorkers names the workers of placed job j that will never start
// it, each with why.
func (p *planner) strayWorkers(j *Job) []string {
	var out []string
	for _, id := range j.Placed {
		w := p.worker[id]
		switch {
		case w == nil:
			out = append(out, id+" gone")
		case w.State == WorkerDraining:
			out = append(out, id+" draining")
		case w.NoPlacedWork:
			out = append(out, id+" reads no place queue of its own")
		}
	}
	return out
}

// unplacing reports whether j's placement is being taken back, this tick
// or in flight: it holds no slots and reserves nothing.
func (p *planner) unplacing(j *Job) bool {
	if j.PendingAction == Unplace {
		return true
	}
	return p.moved[j.ID] != "" && j.waitsPlaced()
}
