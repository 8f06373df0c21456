package policy

import (
	"cmp"
	"slices"
	"time"
)

// poolDemand is the bookkeeping of one elastic pool: the work that needs
// its slots and the workers it has or is getting.
type poolDemand struct {
	pool *Pool
	// running counts jobs staying on workers that take work. Jobs leaving
	// (migrating or reclaimed) and jobs finishing on draining workers need
	// no new worker, so they are not counted.
	running int
	// running and queued are in slots. queued counts the queued jobs
	// placed on this pool this tick and its queued overflow, shares of
	// one GPU as the whole slots their sum fills (shares, thousandths,
	// rounded up).
	queued int
	shares int64
	// gaps is the room beside the running shares of the pool's workers
	// that take work (see appendGaps), and maxGap the most of it on one
	// GPU. A queued burst share counted into one takes no slot: a GPU
	// worker takes a share into room beside its others, as a moved share
	// lands.
	gaps   []shareGap
	maxGap int64
	// gapsOf is where each worker's gaps lie in gaps, which appendGaps
	// lays out worker by worker: rules 4 and 5 ask after one worker's
	// gaps for every worker they weigh.
	gapsOf map[*workerRec]gapSpan
	// members counts, by slots per member, the members of sized jobs
	// placed on this pool this tick, and bins the new workers they need:
	// a sized job only starts where one worker has room for a whole
	// member, so members of one size are packed onto new workers of their
	// own, apart from the one-slot work that fills any slot. Packing by
	// size keeps the count independent of the order jobs come in, which a
	// first fit is not.
	members map[int]int
	bins    int
	// active counts workers up or starting; draining ones are apart.
	active, draining int
	// launching counts workers asked for that have not registered.
	launching int
	// oldestLaunch is the age of the oldest unfilled launch.
	oldestLaunch time.Duration
	// fellBack counts spot-eligible jobs placed here because a spot pool
	// was unavailable: the ScaleUp reason says so.
	fellBack int
}

// slots is the pool's slots per worker, at least 1 so sums stay defined for
// a misconfigured pool (Validate reports it).
func (d *poolDemand) slots() int { return max(d.pool.SlotsPerWorker, 1) }

// limit is how many workers the pool may still have that take work:
// draining workers still count against the provider's maximum.
func (d *poolDemand) limit() int { return max(d.pool.MaxWorkers-d.draining, 0) }

// headroom is how many more queued jobs the pool could run at its maximum
// size; negative when it is over its maximum.
func (d *poolDemand) headroom() int {
	return d.limit()*d.slots() - d.running - d.queued - d.bins*d.slots()
}

// room is headroom for placing jobs: none for a pool without slots.
func (d *poolDemand) room() int {
	if d.pool.SlotsPerWorker <= 0 {
		return 0
	}
	return max(d.headroom(), 0)
}

// want is how many workers taking work the pool needs (rule 3).
//
// Bins are sized work that fits on none of the workers there are, however
// few of their slots are in use, so they come on top of every active
// worker, not of the workers the slot count alone would need.
func (d *poolDemand) want() int {
	n := ceilDiv(d.running+d.queued, d.slots())
	if d.bins > 0 {
		n = max(n, d.active) + d.bins
	}
	return min(n, d.limit())
}

// binsFit reports whether j's members fit on new workers of the pool
// without passing its maximum.
func (d *poolDemand) binsFit(j *Job) bool {
	k := j.slots()
	if k > d.pool.SlotsPerWorker {
		return false
	}
	more := d.binsFor(k, d.members[k]+j.replicas()) - d.binsFor(k, d.members[k])
	return ceilDiv(d.running+d.queued, d.slots())+d.bins+more <= d.limit()
}

// binsFor is how many new workers n members of k slots need.
func (d *poolDemand) binsFor(k, n int) int { return ceilDiv(n, d.slots()/k) }

// addBins packs j's members onto the pool's new workers.
func (d *poolDemand) addBins(j *Job) {
	k := j.slots()
	if d.members == nil {
		d.members = map[int]int{}
	}
	d.bins -= d.binsFor(k, d.members[k])
	d.members[k] += j.replicas()
	d.bins += d.binsFor(k, d.members[k])
}

// spare is how many free slots the registered workers that take work have
// left after the work counted so far (negative when over-committed).
// Launches are left out on purpose: a worker that does not exist yet is not
// where a queued job starts, and counting them would make this tick's
// scale-up change next tick's placement. Drain and release only take a
// worker away while spare and headroom cover its free slots, so the next
// tick places every job where this one did.
//
// The new workers sized jobs need (bins) count as taken: they are in
// want, so releasing a worker for them would launch it again next tick.
func (d *poolDemand) spare() int {
	return d.active*d.slots() - d.running - d.queued - d.bins*d.slots()
}

// supply is how many workers take, or will take, work.
func (d *poolDemand) supply() int { return d.active + d.launching }

// unavailable reports whether an elastic pool has left a launch unfilled for
// longer than the config allows: its capacity is not coming, so work that
// would go there falls back to on-demand.
func (d *poolDemand) unavailable(c Config) bool {
	return d.pool.Kind != PoolFixed && c.SpotFallbackAfter > 0 && d.launching > 0 &&
		d.oldestLaunch >= c.SpotFallbackAfter
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func (v *view) measureElastic(launches []Launch) {
	for _, p := range v.pools {
		if p.Kind.Elastic() {
			d := v.scr.demandFor(p)
			v.demand[p.Name] = d
			v.elastic = append(v.elastic, d)
		}
	}
	slices.SortFunc(v.elastic, func(a, b *poolDemand) int { return cmp.Compare(a.pool.Name, b.pool.Name) })
	v.byPrice = append(v.byPrice[:0], v.elastic...)
	slices.SortStableFunc(v.byPrice, func(a, b *poolDemand) int { return ComparePools(a.pool, b.pool) })
	for _, w := range v.workers {
		// w.pool is the index's pool of that name, so it is one of
		// v.elastic's exactly when v.demand[w.Pool] is set. Comparing
		// pointers over the few elastic pools skips hashing each worker's
		// pool name, which this loop, run every tick over every worker,
		// spent much of its time on.
		d := v.demandOf(w.pool)
		if d == nil {
			continue
		}
		if w.State == WorkerDraining && !v.empty(w) {
			// A draining worker counts against the maximum until it empties;
			// an empty one is released this tick (rule 5).
			d.draining++
		} else if w.active() {
			d.active++
		}
		if w.active() {
			// Jobs migrating or reclaimed away need no worker here.
			d.running += v.staying(w)
			lo := len(d.gaps)
			if d.gaps = appendGaps(d.gaps, w); len(d.gaps) > lo {
				if d.gapsOf == nil {
					d.gapsOf = map[*workerRec]gapSpan{}
				}
				d.gapsOf[w] = gapSpan{int32(lo), int32(len(d.gaps))}
			}
		}
	}
	for _, d := range v.elastic {
		// Overflowed shares pack with the queued shares rule 3 counts
		// after them, as addSlots packs those: counted apart, a share
		// overflowed this tick would count as packed and from the next
		// tick as a slot of its own.
		d.queued += v.ix.toOverflow[d.pool.Name]
		d.shares = v.ix.overflowShares[d.pool.Name]
		d.queued += wholeOf(d.shares)
		for _, g := range d.gaps {
			d.maxGap = max(d.maxGap, g.room)
		}
	}
	for _, l := range launches {
		if d := v.demand[l.Pool]; d != nil && l.Count > 0 {
			d.launching += l.Count
			d.oldestLaunch = max(d.oldestLaunch, v.now.Sub(l.RequestedAt))
		}
	}
}

// staying is what w's records hold there that stays: use(w).used less
// use(w).leaving, plus heldRoom of use(w).held. It reads the record in
// place, as usedHeld does, since this runs for every elastic worker every
// tick.
func (v *view) staying(w *workerRec) int {
	u := w.use
	if u == nil {
		return 0
	}
	used, leaving := u.used, u.leaving
	if u.shared != 0 {
		all := wholeOf(u.shared)
		used += all
		leaving += all - wholeOf(u.shared-u.sharedLeaving)
	}
	return used - leaving + min(u.held, max(w.Slots-max(w.Busy, used, 0), 0))
}

// demandOf is the bookkeeping of pool p, or nil for a fixed pool.
func (v *view) demandOf(p *Pool) *poolDemand {
	for _, d := range v.elastic {
		if d.pool == p {
			return d
		}
	}
	return nil
}

// heldRoom is how many of held slots placed on elastic worker w count
// as work the pool needs: those it has free. The rest is a reservation
// waiting for w's own slots, which no new worker would serve.
func (v *view) heldRoom(w *workerRec, held int) int {
	used, _ := v.usedHeld(w)
	return min(held, max(w.Slots-max(w.Busy, used, 0), 0))
}

// addQueued counts a queued one-slot burst job placed on the pool: a
// slot, or a share of one in the room beside running shares or packed
// with the other queued ones.
func (d *poolDemand) addQueued(j *Job) {
	if j.Share > 0 && d.intoGap(j) {
		return
	}
	d.addSlots(j)
}

// addSlots counts a queued one-slot job placed on the pool as the slots
// it fills: one, or a share of one packed with the other queued ones.
// Overflowed core work (rule 7) is counted so, every tick alike: from the
// next tick it is among the pool's queued overflow, counted in slots.
func (d *poolDemand) addSlots(j *Job) {
	if j.Share <= 0 {
		d.queued++
		return
	}
	before := wholeOf(d.shares)
	d.shares += int64(j.Share)
	d.queued += wholeOf(d.shares) - before
}

// packs reports whether share j fits in the slots the pool's queued
// shares already fill (addSlots), so that it needs no slot of its own.
// Without it a share would go to the next pool whenever the one before
// it had just enough free slots for the shares queued ahead.
func (d *poolDemand) packs(j *Job) bool {
	return d.shares > 0 && wholeOf(d.shares+int64(j.Share)) == wholeOf(d.shares)
}

// intoGap counts share j into the gap it fills best (least room left,
// which keeps the larger gaps for larger shares), and reports whether one
// had room for it.
func (d *poolDemand) intoGap(j *Job) bool {
	i := d.gapFor(j, false)
	if i < 0 {
		return false
	}
	d.take(i, j)
	return true
}

// gapFor is the gap share j fills best, or -1: with fresh, only among
// those no share was counted into this tick.
func (d *poolDemand) gapFor(j *Job, fresh bool) int {
	m := int64(j.Share)
	if m > d.maxGap {
		return -1 // most queued shares found no room when they arrived
	}
	best := -1
	for i, g := range d.gaps {
		if !g.gone && g.room >= m && !(fresh && g.got) && (best < 0 || g.room < d.gaps[best].room) {
			best = i
		}
	}
	return best
}

// take counts share j into gap i.
func (d *poolDemand) take(i int, j *Job) {
	g := &d.gaps[i]
	was := g.room
	g.room -= int64(j.Share)
	g.got = true
	if was == d.maxGap {
		d.maxGap = 0
		for _, g := range d.gaps {
			if !g.gone {
				d.maxGap = max(d.maxGap, g.room)
			}
		}
	}
}

// gapSpan is where one worker's gaps lie in poolDemand.gaps.
type gapSpan struct{ lo, hi int32 }

// gotGap reports whether a share was counted into a gap of w this tick.
func (d *poolDemand) gotGap(w *workerRec) bool {
	sp := d.gapsOf[w]
	return slices.ContainsFunc(d.gaps[sp.lo:sp.hi], func(g shareGap) bool { return g.got })
}

// dropGaps takes w's gaps away: it is drained.
func (d *poolDemand) dropGaps(w *workerRec) {
	sp := d.gapsOf[w]
	for i := sp.lo; i < sp.hi; i++ {
		d.gaps[i].gone = true
	}
}

// pickPool returns the pool that will run queued job j, or nil if none
// can. Free slots on workers already registered come first, and room
// beside their shares for a share, cheapest pool first: every elastic
// worker takes from the burst queue, so that is where the job will in
// fact start, and sizing as if it went elsewhere would launch one worker
// and release another. Otherwise it is the cheapest pool with room to
// grow, or another of its kind whose growth costs less for the work
// (growCost): left is how many jobs this rule's walk has still to place,
// j included, which a new machine may also take. Spot pools are only for
// spot-eligible jobs, and grow only while their launches arrive; a
// spot-eligible job may still take on-demand capacity when it is cheaper
// or the only capacity left.
func (v *view) pickPool(j *Job, spotOK bool, left int) *poolDemand {
	if d := v.takesNow(j, spotOK); d != nil {
		return d
	}
	fallback, fell := false, false
	var best *poolDemand
	var cost float64
	for _, d := range v.byPrice {
		if !v.mayRun(d, j, spotOK) {
			continue
		}
		if d.unavailable(v.cfg) {
			fallback = true
			continue
		}
		if d.room() <= 0 || best != nil && d.pool.Kind != best.pool.Kind {
			continue
		}
		// Ties keep the pools' order (ComparePools).
		if c := d.growCost(left); best == nil || c < cost {
			best, cost, fell = d, c, fallback && d.pool.Kind == PoolOnDemand
		}
	}
	if fell {
		best.fellBack++
	}
	return best
}

// growCost is what one more slot of work on pool d costs an hour, per
// slot of the work it is for. Nothing while the slots counted on d leave
// part of a machine free: this tick's count launches that machine anyway.
// Otherwise a whole new machine, billed for all its slots, spread over
// the work there is to fill it: the jobs left to place, at most its
// slots. So one job does not rent an 8-slot machine at 2.5 a slot when a
// 1-slot one costs 2.6, and eight jobs do. With left at least every
// pool's machine size this is the price per slot-hour.
func (d *poolDemand) growCost(left int) float64 {
	k := d.slots()
	if (d.running+d.queued)%k != 0 {
		return 0
	}
	return d.pool.PricePerSlotHour * float64(k) / float64(min(k, max(left, 1)))
}

// pickSized returns the pool that will grow for sized job j, or nil: rule
// 8 found no registered worker for it, so it needs a new one. As pickPool,
// cheapest first, spot only with spotOK and while its launches arrive; a
// pool whose workers are too small for one member is not for it.
func (v *view) pickSized(j *Job, spotOK bool) *poolDemand {
	d, fellBack := v.sizedPool(j, spotOK)
	if fellBack {
		d.fellBack++
	}
	return d
}

// sizedPool is pickSized without the count: the pool, or nil, and
// whether it is on-demand capacity taken because a spot pool's launches
// did not arrive. Rule 8 asks it too, to know whether a core job past
// its wait has somewhere to overflow to (overflowInstead).
func (v *view) sizedPool(j *Job, spotOK bool) (*poolDemand, bool) {
	fallback := false
	for _, d := range v.byPrice {
		if !v.mayRunSized(d, j, spotOK) {
			continue
		}
		if d.unavailable(v.cfg) {
			fallback = true
			continue
		}
		if !d.binsFit(j) {
			continue
		}
		return d, fallback && d.pool.Kind == PoolOnDemand
	}
	return nil, false
}

// takesNow is the first pool of pickPool's order with room for j before
// any pool is asked to grow: free slots on its registered workers, room
// beside their shares, or room in the slot its queued shares fill; nil if
// none. It changes no count, so rules that predict where rule 3 will
// count a job can ask it.
func (v *view) takesNow(j *Job, spotOK bool) *poolDemand {
	for _, d := range v.byPrice {
		// Room too: workers beyond the pool's maximum are surplus, not spare.
		if v.mayRun(d, j, spotOK) && (d.spare() > 0 && d.room() > 0 || j.Share > 0 && (d.gapFor(j, false) >= 0 || d.packs(j))) {
			return d
		}
	}
	return nil
}

// mayRunSized reports whether pool d may run sized job j at all: as
// mayRun, with workers big enough for a member, in slots and in the CPUs
// and memory the pool declares, and the labels it requires declared for
// the pool. What a pool does not declare is checked once workers register.
func (v *view) mayRunSized(d *poolDemand, j *Job, spotOK bool) bool {
	return v.mayRun(d, j, spotOK) && PoolHolds(d.pool, j)
}

// PoolHolds reports whether one machine of pool p can hold a member of j,
// as far as the pool's config says: slots per worker, the labels j
// requires declared for the pool, and the CPUs and memory it declares.
// What a pool does not declare is checked once its workers register.
func PoolHolds(p *Pool, j *Job) bool {
	return p.SlotsPerWorker >= j.slots() && carries(p.Labels, j.Requires) &&
		!(p.CPUs > 0 && milli(p.CPUs) < j.milliCPU()) && !(p.Memory > 0 && p.Memory < j.Memory)
}

// mayRun reports whether pool d may run j at all.
func (v *view) mayRun(d *poolDemand, j *Job, spotOK bool) bool {
	return d.pool.SlotsPerWorker > 0 && j.fitsRegion(d.pool.Region) && (spotOK || d.pool.Kind != PoolSpot)
}
