package policy

import (
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// unlend is the second half of rule 2. Loans wait behind core work (fixed
// workers take core first), so once queued core work appears, the loans
// that the free fixed slots cannot also absorb go back to burst, where
// elastic capacity can run them instead of leaving them stuck. The most
// recently queued loans go first; the oldest keep their place.
func (p *planner) unlend() {
	core := p.coreQueued.slots()
	if core <= 0 {
		return
	}
	free := p.freeFixed
	excess := p.loans.slots() - max(free-core, 0)
	if excess <= 0 {
		return
	}
	reason := fmt.Sprintf("%d core queued ahead of %d loans leave no free fixed slot for %d of them (%d free)",
		core, p.loans.slots(), excess, free)
	for j := range merged(true, p.ix.queues(QueueLoan)...) {
		if excess <= 0 {
			return
		}
		// A sized loan bigger than the excess stays: unlending it would
		// drop committed work below the fixed slots it was taking.
		if !p.movable(j) || j.weight() > excess {
			continue
		}
		// A share frees a slot only once the shares left no longer fill
		// it, so several may go for one slot of excess.
		excess -= p.loans.sub(j)
		p.add(Action{Kind: Unlend, Job: j.ID, Queue: QueueBurst, Rule: 2, Reason: reason}, j)
	}
}

// lend is rule 2 (and the first move of rule 4): a queued burst job is lent
// to fixed quota while no core work waits and committed utilization,
// counting this loan, stays at or under the high watermark. Lending is the
// cheap move (nothing is running yet), so it comes before migration, and it
// is never undone by utilization alone: only core work unlends, which is
// what keeps lending from flapping around the watermark.
//
// Jobs are lent in queue order. A pinned job is lent only if every fixed
// worker is in its region, since any of them may take it. Counts are in
// slots: a sized job that would pass the watermark is skipped, and smaller
// ones after it may still go.
func (p *planner) lend() {
	if p.coreWaits() {
		return
	}
	ceiling := p.ceiling()
	for j := range merged(false, p.ix.queue(QueueBurst, string(jobs.ClassBurst))) {
		if p.committed() >= ceiling {
			return
		}
		if !p.movable(j) || !p.fitsFixed(j) {
			continue
		}
		// A lend of a k-slot job commits k slots; a sized job is lent only
		// if a fixed worker can ever run it.
		if j.sized() && (p.committed()+j.weight() > ceiling || !p.fixedCanRun(j)) {
			continue
		}
		// Under team shares a lend is a use of the quota like any other
		// (rule 9): within the team's share, or a loan it may have.
		if p.teams != nil {
			if ok, _ := p.mayTake(j, false); !ok {
				continue
			}
		}
		p.lent.add(j)
		p.add(Action{
			Kind: Lend, Job: j.ID, Queue: QueueLoan, Rule: 2,
			Reason: fmt.Sprintf("fixed utilization with queued work %s <= high %.2f, no core waiting",
				p.ratio(p.committed()), p.cfg.High),
		}, j)
	}
}

// fixedCanRun reports whether fixed workers that are up could ever hold
// every member of sized job j, each on a worker big enough, with its
// labels, CPUs and memory, all in one region (a gang never spans two).
func (p *planner) fixedCanRun(j *Job) bool {
	members := map[string]int{}
	for _, w := range p.workers {
		if !p.fixedUp(w) || !canHold(w, j) {
			continue
		}
		r := w.pool.Region
		if members[r] += w.Slots / j.slots(); members[r] >= j.replicas() {
			return true
		}
	}
	return false
}
