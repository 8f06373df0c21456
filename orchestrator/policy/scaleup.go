package policy

import (
	"fmt"
	"slices"
)

// place is the first half of rule 3: every queued job bound for elastic
// capacity (in burst, or on its way there) is placed, in queue order, on
// the cheapest pool that may run it and has room. Spot only takes jobs that
// resume from a checkpoint, may run again and have not been reclaimed too
// often; the rest, and core work, never touch spot. A job no pool can take
// is left waiting.
func (p *planner) place() {
	for _, j := range p.bound() {
		if d := p.pickPool(j, j.spotEligible(p.cfg.MaxSpotPreemptions)); d != nil {
			d.queued++
		}
	}
}

// bound lists, in queue order, the jobs going to the burst queue: queued
// ones there or being unlent, and running ones being reclaimed.
func (p *planner) bound() []*Job {
	var queued, leaving []*Job
	for _, j := range p.queue {
		if p.destination(j) == QueueBurst {
			queued = append(queued, j)
		}
	}
	for _, j := range p.jobs {
		if j.running() && p.destination(j) == QueueBurst {
			leaving = append(leaving, j)
		}
	}
	slices.SortFunc(leaving, byQueueOrder)
	out := make([]*Job, 0, len(queued)+len(leaving))
	for len(queued) > 0 && len(leaving) > 0 {
		if byQueueOrder(queued[0], leaving[0]) <= 0 {
			out, queued = append(out, queued[0]), queued[1:]
		} else {
			out, leaving = append(out, leaving[0]), leaving[1:]
		}
	}
	return append(append(out, queued...), leaving...)
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
		if d.fellBack > 0 {
			reason += fmt.Sprintf("; %d spot-eligible jobs fell back: a spot launch stayed unfilled for %s or more",
				d.fellBack, p.cfg.SpotFallbackAfter)
		}
		d.launching += n
		p.add(Action{Kind: ScaleUp, Pool: d.pool.Name, Count: n, Rule: 3, Reason: reason})
	}
}
