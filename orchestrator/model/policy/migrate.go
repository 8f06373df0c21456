package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// migrate is rule 4: below the low watermark the prepaid quota sits idle
// while elastic capacity is paid by the hour, so checkpointable jobs running
// on elastic workers are checkpointed and requeued for fixed quota (burst to
// loan, overflowed core back to core), up to the high watermark counting
// this tick's lends and moves. Jobs that cannot checkpoint finish where they
// are: stopping them would throw their work away. Pinned jobs only move if
// every fixed worker is in their region. Counts are in slots.
//
// A sized job or a gang waits in loan for rule 8, which never reserves for
// a loan, so it migrates only where it fits on fixed workers now (a gang
// all in one region): otherwise it would stop, checkpoint and then wait
// for slots it could have kept running elsewhere. The fixed slots it will
// take are counted as this tick's, so two migrations never count the same
// free slots, and no sized job migrates while another is in flight. A gang is one job here, on member 0's worker, and every
// member's slots leave. Nothing migrates between the watermarks (rule 6).
func (p *planner) migrate() {
	if p.regime != cool || p.coreWaits() {
		return
	}
	ceiling := p.ceiling()
	var cands []*Job
	for _, w := range p.workers {
		if !p.kind(w).Elastic() || !(w.State == WorkerUp || w.State == WorkerDraining) {
			continue
		}
		for _, j := range w.jobs {
			if j.Checkpointable && p.movable(j) && p.fitsFixed(j) && (!j.sized() || p.fixedCanRun(j)) {
				cands = append(cands, j)
			}
		}
	}
	slices.SortFunc(cands, p.moveOrder)
	sizedMoving := p.sizedMigrating()
	for _, j := range cands {
		if p.committed() >= ceiling {
			return
		}
		if p.teams != nil {
			// As rule 2 lends under team shares (rule 9).
			if ok, _ := p.mayTake(j, false); !ok {
				continue
			}
		}
		if j.sized() {
			if sizedMoving {
				continue
			}
			if p.committed()+j.weight() > ceiling {
				continue
			}
			to := p.fixedRoom(j)
			if to == nil {
				continue
			}
			p.takeFixed(j, to)
		}
		for _, id := range uniqueWorkers(j) {
			if mw := p.worker[id]; mw != nil && mw.active() {
				// A share frees a slot only once the shares left no
				// longer fill it, as the index counts it from the next
				// tick (freedOn).
				d := p.demand[mw.Pool]
				d.running -= p.freedOn(j, mw)
				if p.packs(j) {
					p.tickUse(mw).sharedLeaving += int64(j.Share)
					// A share leaving frees its GPU, which counts as a
					// free slot from the next tick on, and the room
					// beside it then counts nowhere (appendGaps).
					d.dropGaps(mw)
				}
			}
		}
		w := p.worker[j.Worker]
		to := QueueLoan
		if j.Class == jobs.ClassCore {
			to = QueueCore
			p.lentCore.add(j)
		} else {
			p.lent.add(j)
		}
		p.add(Action{
			Kind: Migrate, Job: j.ID, Worker: w.ID, Pool: w.Pool, Queue: to, Rule: 4,
			Reason: fmt.Sprintf("fixed utilization with queued work %s < low %.2f; after the move %s <= high %.2f; leaves %s at %.2f/slot-hour",
				p.ratio(p.fixed.Busy+p.coreQueued.slots()+p.loans.slots()), p.cfg.Low, p.ratio(p.committed()), p.cfg.High,
				w.Pool, p.pools[w.Pool].PricePerSlotHour),
		}, j)
	}
}

// sizedMigrating reports whether a sized job's migration is in flight. The
// fixed slots it will land on are held by nothing until it is queued in
// loan, so the room fixedRoom finds may be its: sized jobs migrate one at
// a time (a checkpoint's time each), and none is planned meanwhile.
func (p *planner) sizedMigrating() bool {
	for r := range p.ix.redirected {
		if r.running() && r.sized() && r.PendingAction == Migrate {
			return true
		}
	}
	return false
}

// fixedRoom returns a fixed worker for each member of sized job j where
// they all fit now, in one region, best fit; nil if there is none. Workers
// holding a reservation are not offered, as rule 8 offers them to nothing.
func (p *planner) fixedRoom(j *Job) []*workerRec {
	g := placeGroup{queue: QueueLoan, target: placeTarget{kind: toFixed}, region: j.Region}
	return p.placerOf().pick(j, g, false)
}

// takeFixed counts the slots, CPUs and memory j's members will take on ws
// as this tick's use, so later rules and moves see them taken. Its slots
// are already committed as a move (lent), so the fixed busy count is left
// alone.
func (p *planner) takeFixed(j *Job, ws []*workerRec) {
	pl := p.placerOf()
	for _, w := range ws {
		pl.take(w, j, false)
	}
	pl.maxFree = pl.maxFree[:0]
	clear(pl.unfit)
	pl.forgetIdle()
}

// moveOrder ranks running elastic jobs for migration: core work home
// first, then the dearest capacity, then the job that loses least.
func (p *planner) moveOrder(a, b *Job) int {
	pa, pb := p.worker[a.Worker].pool, p.worker[b.Worker].pool
	return cmp.Or(
		boolRank(a.Class == jobs.ClassCore, b.Class == jobs.ClassCore),
		cmp.Compare(pb.PricePerSlotHour, pa.PricePerSlotHour),
		cmp.Compare(p.lostWork(a), p.lostWork(b)),
		cmp.Compare(a.ID, b.ID),
	)
}

// boolRank sorts true before false.
func boolRank(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
