package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ballastdev/ballast/jobs"
)

// reclaim is rule 1. Core work owns the fixed quota: when queued core jobs
// outnumber the free fixed slots (counting slots already being handed back)
// and burst jobs are borrowing fixed slots, one borrowed job goes back to
// burst per core job that could not otherwise start. The victims are the
// jobs that lose least: the shortest time since their last checkpoint (or
// start, if they cannot resume), the newest start on a tie.
func (p *planner) reclaim() {
	free := p.fixed.Free()
	p.short = p.coreQueued - free - p.reclaiming
	if p.short <= 0 {
		return
	}
	var victims []*Job
	for _, w := range p.workers {
		if !p.fixedUp(w) {
			continue
		}
		for _, j := range w.jobs {
			if j.Class == jobs.ClassBurst && p.movable(j) {
				victims = append(victims, j)
			}
		}
	}
	slices.SortFunc(victims, func(a, b *Job) int {
		return cmp.Or(cmp.Compare(p.lostWork(a), p.lostWork(b)), b.StartedAt.Compare(a.StartedAt), cmp.Compare(a.ID, b.ID))
	})
	n := min(p.short, len(victims))
	for _, j := range victims[:n] {
		p.add(Action{
			Kind: Reclaim, Job: j.ID, Worker: j.Worker, Queue: QueueBurst, Rule: 1,
			Reason: fmt.Sprintf("%d core queued, %d free fixed slots, %d reclaims in flight; loses %s of work",
				p.coreQueued, free, p.reclaiming, p.lostWork(j)),
		}, j)
	}
	p.short -= n
}
