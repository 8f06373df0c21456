package policy

import (
	"time"
)

// view is an index seen at one instant, with what the rules start from
// measured. It points into the index and never writes through those
// pointers. Every list a rule walks in order is in a total order ending in
// an ID, so the plan does not depend on the order the state was built in.
// References to unknown pools or workers are dropped by the index: a job
// on an unknown worker, or a worker of an unknown pool, is never acted on.
type view struct {
	cfg Config
	now time.Time
	ix  *Index

	pools   map[string]*Pool
	workers []*workerRec // by ID, known pools only
	worker  map[string]*workerRec

	fixed FixedLoad
	// freeFixed is the free fixed slots counted per worker: FixedLoad.Free
	// but for a reservation that over-commits its worker, whose excess
	// takes no slot of another (it waits for its own worker's).
	freeFixed int
	// fixedRegions are the regions of the fixed workers that are up: a
	// pinned job may only be lent if every one of them matches, because any
	// fixed worker may take it from the loan queue.
	fixedRegions map[string]bool
	// reclaiming counts the slots of reclaims in flight from fixed workers
	// that are up: each will hand its slots to queued core jobs.
	reclaiming int
	// demand is the elastic bookkeeping, one entry per elastic pool.
	demand map[string]*poolDemand
	// elastic lists the elastic pools by name; byPrice cheapest first.
	elastic, byPrice []*poolDemand
	// scr is the index's working memory these maps and lists come from
	// (scratch.go); the planner and placer take theirs from it too.
	scr *scratch
}

func newView(ix *Index, now time.Time) *view {
	scr := ix.scratchOf()
	v := &view{
		scr:          scr,
		cfg:          ix.cfg,
		now:          now,
		ix:           ix,
		pools:        ix.pools,
		workers:      ix.sorted,
		worker:       ix.workers,
		fixedRegions: scr.fixedRegions,
		demand:       scr.demand,
		elastic:      scr.elastic,
		byPrice:      scr.byPrice,
	}
	v.measureFixed()
	v.measureElastic(ix.launches)
	return v
}

// kind is the kind of the worker's pool.
func (v *view) kind(w *workerRec) PoolKind { return w.pool.Kind }

// use is what the job records hold on w.
func (v *view) use(w *workerRec) slotUse {
	if u := w.use; u != nil {
		return u.slots()
	}
	return slotUse{}
}

// usedHeld is use(w).used and use(w).held without the copy of the whole
// record use makes: the rules ask for these two on every worker every
// tick, and the copies came to a tenth of a plan's time.
func (v *view) usedHeld(w *workerRec) (used, held int) {
	u := w.use
	if u == nil {
		return 0, 0
	}
	used = u.used
	if u.shared != 0 {
		used += wholeOf(u.shared)
	}
	return used, u.held
}

// busy is how many slots the worker uses: the larger of what it reports and
// what the running job records say, so a lagging heartbeat never makes
// room that is not there, plus the slots held for jobs placed there and
// not yet started. Those may be in what it reports already; counting them
// twice for the moment until they start never over-commits a worker,
// where taking the larger could.
func (v *view) busy(w *workerRec) int {
	return min(v.rawBusy(w, 0), max(w.Slots, 0))
}

// rawBusy is busy with extra slots placed this tick, not capped.
func (v *view) rawBusy(w *workerRec, extra int) int {
	used, held := v.usedHeld(w)
	return max(w.Busy, used, 0) + held + extra
}

// empty reports whether nothing runs on, or is held by, the worker by
// either account.
func (v *view) empty(w *workerRec) bool {
	used, held := v.usedHeld(w)
	return w.Busy <= 0 && len(w.jobs) == 0 && used == 0 && held == 0
}

// fixedUp reports whether w is a fixed worker taking work.
func (v *view) fixedUp(w *workerRec) bool { return v.kind(w) == PoolFixed && w.State == WorkerUp }

func (v *view) measureFixed() {
	for _, w := range v.workers {
		if !v.fixedUp(w) {
			continue
		}
		v.reclaiming += v.use(w).reclaiming
		if w.Slots <= 0 {
			continue
		}
		v.fixed.Slots += w.Slots
		// Slots held for placed jobs count in full, even past the
		// worker's slots: a reservation is committed work, as queued core
		// work is, and placing a job must not lower what is committed.
		used, held := v.usedHeld(w)
		v.fixed.Busy += min(max(w.Busy, used, 0), w.Slots) + held
		v.freeFixed += max(w.Slots-v.rawBusy(w, 0), 0)
		v.fixedRegions[w.pool.Region] = true
	}
	v.fixed.QueuedCore, v.fixed.Loans = v.ix.queuedCore(), v.ix.queuedLoans()
}

// fitsFixed reports whether every fixed worker that could take the job from
// the loan queue is in a region the job allows.
func (v *view) fitsFixed(j *Job) bool {
	for r := range v.fixedRegions {
		if !j.fitsRegion(r) {
			return false
		}
	}
	return true
}

// lostWork is what stopping a running job now throws away.
func (v *view) lostWork(j *Job) time.Duration { return max(v.now.Sub(j.since()), 0) }
