package policy

import (
	"fmt"
	"iter"
	"slices"
)

// place is the first half of rule 3: every queued job bound for elastic
// capacity (in burst, or on its way there) is placed, in queue order, on
// the cheapest pool that may run it and has room. Spot only takes jobs that
// resume from a checkpoint, may run again and have not been reclaimed too
// often; the rest, and core work, never touch spot. A job no pool can take
// is left waiting.
func (p *planner) place() {
	// left counts down to the jobs still to place, this one included.
	left := p.boundCount() + 1
	for j := range p.bound() {
		left--
		// Placing only ever takes room, and without room anywhere
		// pickPool places nothing but shares, into room beside running
		// ones or in the slot queued ones fill: the rest of the backlog
		// would not move a count. While a share may still land, the
		// other jobs are passed over at the cost of these two checks.
		if !p.anyRoom(true) {
			if !p.anyShareRoom() {
				return
			}
			if j.Share == 0 {
				continue
			}
		}
		spotOK := j.spotEligible(p.cfg.MaxSpotPreemptions)
		if j.sized() {
			// Rule 8 found no registered worker for it: it needs a new one.
			if d := p.pickSized(j, spotOK); d != nil {
				d.addBins(j)
			}
			continue
		}
		if d := p.pickPool(j, spotOK, left); d != nil {
			d.addQueued(j)
		}
	}
}

// anyRoom reports whether an elastic pool has room to place a job, spot
// pools counting only with spotOK.
func (p *planner) anyRoom(spotOK bool) bool {
	for _, d := range p.elastic {
		if d.room() > 0 && (spotOK || d.pool.Kind != PoolSpot) {
			return true
		}
	}
	return false
}

// anyShareRoom reports whether an elastic pool has room a queued share
// may be counted into without a slot of its own: beside its running
// shares, or in the slot its queued shares fill in part (see pickPool).
func (p *planner) anyShareRoom() bool {
	for _, d := range p.elastic {
		if d.maxGap > 0 || d.shares%1000 != 0 {
			return true
		}
	}
	return false
}

// bound yields, in queue order, the jobs going to the burst queue: queued
// ones there or being unlent, and running ones being reclaimed. Most wait
// in the burst queue's sets; the others have a move in flight or planned
// this tick, which are few.
func (p *planner) bound() iter.Seq[*Job] {
	var queued, leaving []*Job
	extra := func(j *Job) {
		if (j.queued() && j.Queue == QueueBurst) || p.destination(j) != QueueBurst {
			return // in the burst sets already, or not bound there
		}
		if j.running() {
			leaving = append(leaving, j)
		} else {
			queued = append(queued, j)
		}
	}
	for r := range p.ix.redirected {
		extra(r.Job)
	}
	for _, j := range p.movedJobs {
		extra(j)
	}
	slices.SortFunc(queued, byQueueOrder)
	slices.SortFunc(leaving, byQueueOrder)
	lists := p.ix.queues(QueueBurst)
	for _, l := range [][]*Job{queued, leaving} {
		if len(l) > 0 {
			lists = append(lists, [][]*Job{l})
		}
	}
	return func(yield func(*Job) bool) {
		for j := range merged(false, lists...) {
			// Placed jobs have their workers (rule 8).
			if j.waitsPlaced() || p.placing[j.ID] {
				continue
			}
			if p.destination(j) == QueueBurst && !yield(j) {
				return
			}
		}
	}
}

// boundCount is how many jobs bound yields at most: the queued burst
// work and the few jobs on their way there. Placed and sized jobs are
// among them, so it is an upper bound of the one-slot work rule 3 places,
// as pickPool needs it: how many jobs a new machine may also take.
func (p *planner) boundCount() int {
	n := len(p.ix.redirected) + len(p.movedJobs)
	for _, set := range p.ix.queues(QueueBurst) {
		for _, c := range set {
			n += len(c)
		}
	}
	return n
}

// scaleUp is the second half of rule 3: a pool that needs more workers
// than it has, is starting and has asked for gets the difference. Counting
// starting workers and unfilled launches is what keeps one burst from being
// launched once per tick.
func (p *planner) scaleUp() {
	for _, d := range p.elastic {
		n := d.want() - d.supply()
		if n <= 0 {
			continue
		}
		reason := fmt.Sprintf("%d running + %d queued need %d workers of %d slots (max %d, %d draining); have %d (+%d launching)",
			d.running, d.queued, d.want(), d.slots(), d.pool.MaxWorkers, d.draining, d.active, d.launching)
		if d.bins > 0 {
			reason += fmt.Sprintf("; sized jobs need %d of them to themselves", d.bins)
		}
		if d.fellBack > 0 {
			reason += fmt.Sprintf("; %d spot-eligible jobs fell back: a spot launch stayed unfilled for %s or more",
				d.fellBack, p.cfg.SpotFallbackAfter)
		}
		d.launching += n
		p.add(Action{Kind: ScaleUp, Pool: d.pool.Name, Count: n, Rule: 3, Reason: reason}, nil)
	}
}
