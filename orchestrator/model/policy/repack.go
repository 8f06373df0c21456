package policy

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// repack is the part of rule 5 that makes an elastic worker idle so it can
// be released. An elastic worker is billed for all its slots while any job
// runs on it, so jobs that ended unevenly leave many workers each running
// a few jobs: a pool of 8-slot workers can pay for 24 slots to run 6 jobs,
// and two 1-GPU workers each a 0.4 GPU share. Work that cannot checkpoint
// pins its worker until it ends; checkpointable burst work need not.
// When every job a worker runs is one-slot checkpointable burst work, and
// the pool's other busy workers hold all of it, the jobs are checkpointed
// back to burst (Action Repack) and the worker is drained (Action Drain),
// so rule 5 releases it once they have left.
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
//     ones, unless every job fits the room beside shares: then the pool
//     has less room than work, and a repacked job would only take a slot
//     a queued job needs.
//   - Only once the worker's paid time is used up to ReleaseMargin, as
//     rule 5 releases an idle worker: a job moved off a worker whose hour
//     is paid saves nothing, and costs its checkpoint.
//   - A sized job or gang pins its worker: it would go back through rule
//     8, which counts a sized job on its way to burst as needing a new
//     worker, so its move would launch one.
//   - Every job must land, as rule 3 places it next tick, on registered
//     workers: in the room beside this pool's shares, or on free slots of
//     this pool, within the room counted, or of a cheaper pool. Never
//     where a worker would launch for it.
//   - The workers with least to move go first, in thousandths of a slot.
//
// GPU shares (Job.Share) are counted at their share, so a worker of one
// GPU whose shares all checkpoint is repacked too: the shares move into
// the room beside other workers' shares, and its whole GPU is released.
// "Half its slots" is then half its GPU-thousandths, and a worker of
// shares only may hold more when every share fits such room: it then
// takes no slot. A busy worker's shares leave room the policy counts only
// where it is sure of it: on each GPU the worker reports shares on, or
// where its job records alone say there must be some (see appendGaps).
// Each moved share counts on a gap of its own, one no queued share was
// counted into this tick: how shares that come back together pack beside
// others depends on the order they come back in, which the policy does
// not know, and one each fits in any order. A worker repacked takes its
// gaps with it, and one a share is counted into stays. A share that fits
// no gap takes a free slot, packed with the worker's other such shares,
// as rule 3 counts queued shares.
//
// This is not rule 4: nothing moves to or from the fixed quota, so the
// fixed utilization and the watermarks that keep rule 4 from flapping do
// not gate it. A repacked job waits in burst as any other, where rule 2
// may lend it to the quota.
func (p *planner) repack() {
	for _, d := range p.elastic {
		p.repackPool(d)
	}
}

// shareGap is the room a worker surely has beside its shares, in
// thousandths of a GPU. A worker drained this tick takes its gap with it
// (gone); one that a share was counted into this tick (got) runs it, so
// is neither drained nor emptied by its own jobs' moves.
type shareGap struct {
	w         *workerRec
	room      int64
	gone, got bool
}

// repackPool repacks the workers of one elastic pool.
func (p *planner) repackPool(d *poolDemand) {
	type cand struct {
		w    *workerRec
		jobs []*Job
		free int
		load int64
	}
	// Nowhere to land: no free slot on the pool's workers, and no room
	// beside their shares. Most ticks of a busy pool end here.
	if d.spare() <= 0 && len(d.gaps) == 0 {
		return
	}
	var cands []cand
	busy := func(w *workerRec) bool {
		return w.State == WorkerUp && !p.idle(w) && !slices.Contains(p.scr.drained, w)
	}
	ws := p.ix.byPool[d.pool.Name]
	for _, w := range ws {
		if js, load, ok := p.repackable(w, d); ok && busy(w) {
			cands = append(cands, cand{w, js, max(p.freeSlots(w), 0), load})
		}
	}
	if len(cands) == 0 {
		return
	}
	// room is the free slots of busy workers that take work, less the
	// slots of work this tick placed on the pool, which takes them first.
	room := -d.queued
	for _, w := range ws {
		if busy(w) {
			room += max(p.freeSlots(w), 0)
		}
	}
	// The least to move first: the fuller workers then keep their jobs
	// and take the others' shares.
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.load, b.load), cmp.Compare(a.w.ID, b.w.ID))
	})
	var slotted []*Job
	saved := make([]shareGap, len(d.gaps))
	for _, c := range cands {
		if d.gotGap(c.w) {
			continue
		}
		// The worker's own free slots and gap go with it.
		left := room - c.free
		copy(saved, d.gaps)
		savedMax := d.maxGap
		d.dropGaps(c.w)
		// Largest share first, as a packing that leaves room for the
		// small ones.
		byShare := slices.Clone(c.jobs)
		slices.SortStableFunc(byShare, func(a, b *Job) int { return cmp.Compare(b.Share, a.Share) })
		// One moved share a gap, into none a queued share took: how
		// moved shares pack beside others then depends on the order they
		// come back in, which this does not know.
		slotted = slotted[:0]
		var need slotCount // the free slots the slotted take, shares packed
		for _, j := range byShare {
			i := -1
			// Into a gap of d only if rule 3 will look at d first, after
			// this tick's backlog and before it (the job goes back ahead
			// of work queued after it): a cheaper pool with room for the
			// share next tick takes it. replace then counts it there, or
			// refuses the move.
			if j.Share > 0 && p.takesNow(j, j.spotEligible(p.cfg.MaxSpotPreemptions)) == d {
				if f := p.firstFree(j); f == nil || ComparePools(f.pool, d.pool) >= 0 {
					i = d.gapFor(j, true)
				}
			}
			if i < 0 {
				slotted = append(slotted, j)
				need.add(j)
				continue
			}
			d.take(i, j)
		}
		// Over half its slots, or while the pool waits for workers, it
		// goes only if no job needs a free slot.
		short := d.bins > 0 || d.launching > 0 || 2*c.load > 1000*int64(c.w.Slots)
		here, ok := 0, need.slots() <= left && (!short || len(slotted) == 0)
		if ok {
			here, ok = p.replace(d, c.w, slotted, left)
		}
		if !ok {
			copy(d.gaps, saved)
			d.maxGap = savedMax
			continue
		}
		room = left - here
		// By ID: the worker's list is in the order its jobs arrived,
		// and a plan must not depend on it.
		for _, j := range slices.SortedFunc(slices.Values(c.jobs), func(a, b *Job) int { return cmp.Compare(a.ID, b.ID) }) {
			p.add(Action{
				Kind: Repack, Job: j.ID, Worker: c.w.ID, Pool: d.pool.Name, Queue: QueueBurst, Rule: 5,
				Reason: fmt.Sprintf("worker %s runs %d jobs on %d slots, all checkpointable burst work that the free slots and share room of the pool's other busy workers hold",
					c.w.ID, len(c.jobs), c.w.Slots),
			}, j)
		}
		p.add(Action{
			Kind: Drain, Worker: c.w.ID, Pool: d.pool.Name, Rule: 5,
			Reason: fmt.Sprintf("repacked: its %d jobs move to the pool's other workers; released once empty", len(c.jobs)),
		}, nil)
	}
}

// appendGaps appends the room w has beside its running shares. From
// the GPUs the worker reports, each with shares on it and room left, when
// the report agrees with the job records: its shares sum to theirs (one a
// heartbeat old does not), it names no more GPUs than the worker has, and
// the worker counts each of them busy beside the slots of its whole jobs,
// so a report cannot claim room it does not pay for in slots. Else from
// the records alone, which know the shares' sum but not which GPU each
// runs on: some GPU holding them has at least 1000 less their sum free,
// so under one GPU that much is sure, and over it nothing is (see
// repack). None while a share leaves (the GPU it frees counts as a free
// slot until then) or slots are held for a placed job (the worker takes
// nothing until it starts).
func appendGaps(gaps []shareGap, w *workerRec) []shareGap {
	u := w.use
	if u == nil || u.shared <= 0 || u.sharedLeaving > 0 || u.held > 0 {
		return gaps
	}
	if reportAgrees(w, u) {
		for _, m := range w.SharedGPUs {
			if m < 1000 {
				gaps = append(gaps, shareGap{w: w, room: int64(1000 - m)})
			}
		}
		return gaps
	}
	if u.shared < 1000 {
		gaps = append(gaps, shareGap{w: w, room: 1000 - u.shared})
	}
	return gaps
}

// reportAgrees reports whether what w says its shares use of each GPU
// agrees with the job records u (see appendGaps).
func reportAgrees(w *workerRec, u *slotUse) bool {
	n := len(w.SharedGPUs)
	if n == 0 || n > w.Slots || w.Busy < u.used+n {
		return false
	}
	sum := int64(0)
	for _, m := range w.SharedGPUs {
		if m < 1 || m > 1000 {
			return false
		}
		sum += int64(m)
	}
	return sum == u.shared
}

// replace counts w out of pool d and its jobs where rule 3 will place
// them next tick, as it places queued burst work (pickPool): on the
// cheapest pool with spare slots on its registered workers, room beside
// its shares, or room in the slot its queued shares fill. Each must land
// where it would before this tick's backlog too (firstFree), as it goes
// back ahead of work queued after it, and the pool left must still hold
// the work counted on it. It reports how many land on d, at most room,
// and whether all land where no worker launches for them; if not, the
// counts are left as they were.
func (p *planner) replace(d *poolDemand, w *workerRec, js []*Job, room int) (int, bool) {
	// The copies share the members maps, which nothing here writes.
	saved := p.scr.saved[:0]
	for _, e := range p.elastic {
		saved = append(saved, *e)
	}
	p.scr.saved = saved
	headroom := d.headroom()
	// Draining, it counts against the pool's maximum until it empties.
	d.active--
	d.draining++
	d.running -= p.staying(w)
	here := 0
	// The gaps of other pools a share is counted into, as they were, to
	// put back if a later job finds no place.
	var gapsBefore map[*poolDemand][]shareGap
	undo := func() {
		for i, e := range p.elastic {
			*e = saved[i]
		}
		for e, gs := range gapsBefore {
			copy(e.gaps, gs)
		}
	}
	for _, j := range js {
		// Where a pool would grow matters not: replace accepts only a
		// pool with room before the backlog (firstFree).
		e := p.pickPool(j, j.spotEligible(p.cfg.MaxSpotPreemptions), math.MaxInt)
		// A moved job goes back ahead of the queued work submitted
		// after it, so next tick it may take the free slots this tick's
		// backlog took here, and push that work to a pool that launches
		// for it: it must land where it would before the backlog too.
		first := e != nil && e == p.firstFree(j)
		// A share fitting room beside another pool's shares goes there,
		// as rule 3 will count it next tick (addQueued); those that fit
		// a gap of d are counted there already.
		if first && e != d && j.Share > 0 {
			if i := e.gapFor(j, false); i >= 0 {
				if gapsBefore == nil {
					gapsBefore = map[*poolDemand][]shareGap{}
				}
				if _, ok := gapsBefore[e]; !ok {
					gapsBefore[e] = slices.Clone(e.gaps)
				}
				e.take(i, j)
				continue
			}
		}
		// A share may also pack beside the shares already counted onto
		// e's free slots, as pickPool found.
		fits := first && (e.spare() > 0 || j.Share > 0 && e.packs(j))
		if fits {
			before := e.queued
			e.addSlots(j)
			if e == d {
				here += e.queued - before
				fits = here <= room
			}
		}
		if !fits {
			undo()
			return 0, false
		}
	}
	// The drained worker still counts against the pool's maximum: work
	// counted on d that fit under it must still fit, or next tick it
	// would go to a pool that launches for it. Even when every job went
	// into room beside shares, and none was placed above.
	if d.headroom() < min(headroom, 0) {
		undo()
		return 0, false
	}
	return here, true
}

// firstFree is the pool pickPool's first choice would be for j with none
// of this tick's queued work counted: the cheapest that may run j with
// free slots on its registered workers.
func (p *planner) firstFree(j *Job) *poolDemand {
	spotOK := j.spotEligible(p.cfg.MaxSpotPreemptions)
	for _, d := range p.byPrice {
		if p.mayRun(d, j, spotOK) && d.spare()+d.queued > 0 && d.room()+d.queued > 0 {
			return d
		}
	}
	return nil
}

// repackable returns the jobs of w, and what they hold in thousandths of
// a slot, when every one may be repacked and the worker's paid time is
// used up: it then empties by their moves alone. The checks of the jobs'
// kinds come first: they turn most workers away, at least cost.
func (p *planner) repackable(w *workerRec, d *poolDemand) ([]*Job, int64, bool) {
	if len(w.jobs) == 0 {
		return nil, 0, false
	}
	load, shares := int64(0), true
	for _, j := range w.jobs {
		if j.Class != jobs.ClassBurst || !j.Checkpointable || j.sized() {
			return nil, 0, false
		}
		load += j.milliSlots()
		shares = shares && j.Share > 0
	}
	// At most half its slots, in thousandths of one: shares at their
	// share. A worker of shares only may fill more (see repack).
	if 2*load > 1000*int64(w.Slots) && !shares {
		return nil, 0, false
	}
	// Slots placed this tick, or held for a placed job: the worker waits
	// to start it.
	if p.tickSlots(w) != 0 {
		return nil, 0, false
	}
	if _, held := p.usedHeld(w); held != 0 {
		return nil, 0, false
	}
	left := d.pool.PaidUntil(w.billingStart(), p.now).Sub(p.now)
	if left > p.cfg.ReleaseMargin {
		return nil, 0, false
	}
	for _, j := range w.jobs {
		// A worker's jobs are running ones; movable leaves out any with a
		// move in flight.
		if !p.movable(j) || p.now.Sub(j.StartedAt) < d.pool.IdleTTL {
			return nil, 0, false
		}
	}
	return w.jobs, load, true
}
