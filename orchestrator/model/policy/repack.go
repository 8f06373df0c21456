package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// repack is the part of rule 5 that makes an elastic worker idle so it can
// be released. An elastic worker is billed for all its slots while any job
// runs on it, so on pools of several slots per worker, jobs that ended
// unevenly leave many workers each running a few jobs: a pool of 8-slot
// workers can pay for 24 slots to run 6 jobs. Work that cannot checkpoint
// pins its worker until it ends; checkpointable burst work need not.
// When every job a worker runs is one-slot checkpointable burst work, and
// the free slots of the pool's other busy workers hold all of it, the jobs
// are checkpointed back to burst (Action Repack) and the worker is drained
// (Action Drain), so rule 5 releases it once they have left.
//
// A move costs the job its work since its last checkpoint, the checkpoint
// and a new start; it saves the worker's price until the job would have
// ended, which the policy does not know. So it repacks only what is likely
// to run on and cheap to gather:
//   - Jobs that have run for at least the pool's IdleTTL. Run times are
//     heavy-tailed, and a job that has run long tends to run on; one
//     younger than the time an idle worker is kept may end before a
//     released worker would have gone.
//   - Workers running jobs on at most half their slots. Each move then
//     frees at least two slots; moving the jobs of a fuller worker into
//     the gaps of others only shuffles slots, and leaves the pool none for
//     the next job to arrive, which then launches a worker.
//
// Why the other limits:
//   - Only free slots on workers that stay busy count. Moving work onto an
//     idle worker would swap one billed worker for another, and work
//     placed on the pool this tick (rule 3) takes free slots first.
//   - Not while the pool launches workers or sized work waits for new
//     ones: then the pool has less room than work, and a repacked job
//     would only take a slot a queued job needs.
//   - Only once the worker's paid time is used up to ReleaseMargin, as
//     rule 5 releases an idle worker: a job moved off a worker whose hour
//     is paid saves nothing, and costs its checkpoint.
//   - A sized job or gang pins its worker: it would go back through rule
//     8, which counts a sized job on its way to burst as needing a new
//     worker, so its move would launch one. A GPU share moves, counted as
//     a whole slot where it goes.
//   - Every job must land, as rule 3 places it next tick, on free slots of
//     registered workers: of this pool, within the room counted, or of a
//     cheaper pool. Never where a worker would launch for it.
//   - The workers with least to move go first.
//
// This is not rule 4: nothing moves to or from the fixed quota, so the
// fixed utilization and the watermarks that keep rule 4 from flapping do
// not gate it. A repacked job waits in burst as any other, where rule 2
// may lend it to the quota.
func (p *planner) repack() {
	for _, d := range p.elastic {
		if d.slots() < 2 || d.bins > 0 || d.launching > 0 {
			continue
		}
		p.repackPool(d)
	}
}

// repackPool repacks the workers of one elastic pool.
func (p *planner) repackPool(d *poolDemand) {
	type cand struct {
		w    *workerRec
		jobs []*Job
		free int
	}
	var cands []cand
	// room is the free slots of busy workers that take work, less the
	// slots of work this tick placed on the pool, which takes them first.
	room := -d.queued
	for _, w := range p.ix.byPool[d.pool.Name] {
		if w.State != WorkerUp || p.idle(w) || slices.Contains(p.scr.drained, w) {
			continue
		}
		free := max(p.freeSlots(w), 0)
		room += free
		if js, ok := p.repackable(w, d); ok {
			cands = append(cands, cand{w, js, free})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(len(a.jobs), len(b.jobs)), cmp.Compare(a.w.ID, b.w.ID))
	})
	for _, c := range cands {
		// The worker's own free slots go with it.
		left := room - c.free
		if len(c.jobs) > left {
			continue
		}
		here, ok := p.replace(d, c.w, c.jobs, left)
		if !ok {
			continue
		}
		room = left - here
		for _, j := range c.jobs {
			p.add(Action{
				Kind: Repack, Job: j.ID, Worker: c.w.ID, Pool: d.pool.Name, Queue: QueueBurst, Rule: 5,
				Reason: fmt.Sprintf("worker %s runs %d jobs on %d slots, all checkpointable burst work that %d free slots of the pool's other busy workers hold",
					c.w.ID, len(c.jobs), c.w.Slots, left),
			}, j)
		}
		p.add(Action{
			Kind: Drain, Worker: c.w.ID, Pool: d.pool.Name, Rule: 5,
			Reason: fmt.Sprintf("repacked: its %d jobs move to the pool's other workers; released once empty", len(c.jobs)),
		}, nil)
	}
}

// replace counts w out of pool d and its jobs where rule 3 will place
// them next tick, as it places queued burst work: on the cheapest pool
// with spare slots on its registered workers. It reports how many land on
// d, at most room, and whether all land where no worker launches for
// them; if not, the counts are left as they were.
func (p *planner) replace(d *poolDemand, w *workerRec, js []*Job, room int) (int, bool) {
	// The copies share the members maps, which nothing here writes.
	saved := p.scr.saved[:0]
	for _, e := range p.elastic {
		saved = append(saved, *e)
	}
	p.scr.saved = saved
	// Draining, it counts against the pool's maximum until it empties.
	d.active--
	d.draining++
	d.running -= p.staying(w)
	here := 0
	for _, j := range js {
		e := p.pickPool(j, j.spotEligible(p.cfg.MaxSpotPreemptions))
		if e == nil || e.spare() <= 0 || (e == d && here == room) {
			for i, e := range p.elastic {
				*e = saved[i]
			}
			return 0, false
		}
		e.addQueued(j)
		if e == d {
			here++
		}
	}
	return here, true
}

// repackable returns the jobs of w when every one may be repacked and the
// worker's paid time is used up: it then empties by their moves alone.
func (p *planner) repackable(w *workerRec, d *poolDemand) ([]*Job, bool) {
	if p.tickSlots(w) != 0 || len(w.jobs) == 0 || 2*len(w.jobs) > w.Slots {
		return nil, false
	}
	// Slots held for a placed job: the worker waits to start it.
	if _, held := p.usedHeld(w); held != 0 {
		return nil, false
	}
	left := d.pool.PaidUntil(w.billingStart(), p.now).Sub(p.now)
	if left > p.cfg.ReleaseMargin {
		return nil, false
	}
	for _, j := range w.jobs {
		// A worker's jobs are running ones; movable leaves out any with a
		// move in flight.
		if j.Class != jobs.ClassBurst || !j.Checkpointable || j.sized() || !p.movable(j) {
			return nil, false
		}
		if p.now.Sub(j.StartedAt) < d.pool.IdleTTL {
			return nil, false
		}
	}
	return w.jobs, true
}
