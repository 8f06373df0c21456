package policy

import (
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// overflow is rule 7, off unless Config.CoreOverflow is set: a queued core
// job that has waited its allowed delay (Job.MaxWait when the job has its
// own, else Config.CoreMaxWait) and still cannot get a fixed slot after
// rule 1 goes to the cheapest on-demand pool with room, for teams that
// would rather pay the premium than miss a deadline. Never spot: a core job
// must not lose its worker to a provider's whim.
//
// The head of the core queue is skipped: the free fixed slots and the slots
// that rule 1's reclaims (planned and in flight) are freeing go to the
// longest-waiting core jobs, since fixed workers take core work in queue
// order. Overflowing one of those would race the fixed worker for it and pay
// on-demand for a job a fixed slot is about to take.
func (p *planner) overflow() {
	if !p.cfg.CoreOverflow {
		return
	}
	p.overflowCore(map[string]bool{})
}

// overflowHeld is rule 7 for core work held under team shares (rule 9):
// a held job that rule 9 did not admit this tick may not take a fixed
// slot now, so it overflows once it has waited its allowed delay since
// QueuedAt, as a queued core job does. It runs after rule 4's
// migrations, whose jobs leave the on-demand slots it may take: held
// work overflows whether or not core work waits, so the two may meet
// in one tick, and the next tick must not find room this one did not.
func (p *planner) overflowHeld() {
	if !p.cfg.CoreOverflow || len(p.ix.held) == 0 {
		return
	}
	full := map[string]bool{}
	sent := len(p.actions)
	for j := range merged(false, p.ix.queues(QueueHeld)...) {
		if !p.anyRoom(false) {
			break
		}
		if isCore(j) {
			p.overflowOne(j, full, false)
		}
	}
	// A held share sent to a pool leaves room beside it, in the slot it
	// fills, that a queued core share may pack into (pickPool). Next tick
	// the core queue is looked at before the held work, and would find
	// it: look again now.
	if len(p.actions) > sent {
		p.overflowCore(map[string]bool{})
	}
}

// overflowCore is rule 7 for the core queue.
//
// Sized core work goes first, apart from the count: rule 8 has placed
// every sized core job that has room on a fixed worker now, so one still
// unplaced has none, however many slots are free on workers of another
// flavor or size, and free slots by count serve it no more than they
// serve a job of a model the quota lacks. Past its wait it overflows to
// an on-demand pool whose machines hold it, if one has room. A sized job
// placed on fixed workers waits there: its slots are being held for it.
func (p *planner) overflowCore(full map[string]bool) {
	if set := p.ix.sized[queueKey{QueueCore, string(jobs.ClassCore)}]; set != nil {
		for j := range set.all() {
			if !p.anyRoom(false) {
				break
			}
			if !j.waitsPlaced() && !p.placing[j.ID] {
				p.overflowOne(j, full, true)
			}
		}
	}
	if p.short <= 0 {
		return
	}
	// The queue's head that fixed slots serve stays; shares in it pack
	// as the count of queued core work packs them.
	served, ahead := p.coreQueued.slots()-p.short, slotCount{}
	// Which pool takes a core job depends on the job only through its
	// region, and pools only fill up as the loop goes: once no pool may take
	// a job of some region, none takes a later one, and once no pool has
	// room (spot never takes core work) the rest of the backlog need not be
	// looked at.
	for j := range merged(false, p.ix.queue(QueueCore, string(jobs.ClassCore))) {
		if p.short <= 0 || !p.anyRoom(false) {
			return
		}
		if j.sized() {
			continue // above
		}
		if ahead.with(j).slots() <= served {
			ahead.add(j)
			continue
		}
		p.overflowOne(j, full, true)
	}
}

// overflowInstead reports whether core job j, which no fixed worker has
// room for now, goes to on-demand capacity rather than waiting held on a
// fixed worker: core overflow is on, j has waited its allowed delay, and
// an on-demand pool whose machines may run it has room for them, as
// overflowOne will ask of it (sizedPool; never spot). A pool at its
// maximum takes nothing: the job then keeps (or makes) its reservation,
// or one-slot work would take every slot the quota frees before it could
// start.
func (p *planner) overflowInstead(j *Job) bool {
	if !p.cfg.CoreOverflow || j.Class != jobs.ClassCore || j.Queue != QueueCore || p.now.Sub(j.QueuedAt) < j.maxWait(p.cfg) {
		return false
	}
	d, _ := p.sizedPool(j, false)
	return d != nil
}

// overflowOne sends core job j to the cheapest on-demand pool with room
// once it has waited its allowed delay; full notes the regions where no
// pool has room for one-slot work. queued says j is in the core queue's
// counts (a held job is not).
func (p *planner) overflowOne(j *Job, full map[string]bool, queued bool) {
	wait := j.maxWait(p.cfg)
	if full[j.Region] || !p.movable(j) || p.now.Sub(j.QueuedAt) < wait {
		return
	}
	var d *poolDemand
	if j.sized() {
		d = p.pickSized(j, false)
	} else {
		// The core slots still short are the work rule 7 may send on.
		left := 1
		if queued {
			left = p.short
		}
		d = p.pickPool(j, false, left)
	}
	if d == nil {
		if !j.sized() {
			full[j.Region] = true
		}
		return
	}
	if j.sized() {
		d.addBins(j) // as binOverflow counts it from next tick
	} else {
		d.addSlots(j) // as measureElastic counts it from next tick
	}
	if queued {
		p.short -= p.coreQueued.sub(j)
	}
	p.add(Action{
		Kind: Overflow, Job: j.ID, Pool: d.pool.Name, Queue: QueueOverflow, Rule: 7,
		Reason: fmt.Sprintf("core queued %s >= max wait %s with no fixed slot; on-demand at %.2f/slot-hour",
			p.now.Sub(j.QueuedAt), wait, d.pool.PricePerSlotHour),
	}, j)
}
