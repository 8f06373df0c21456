package policy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// placeSized is rule 8. A sized job (more than one slot, a gang, CPUs,
// memory or labels to match) never waits in a queue workers read, since a
// worker that takes whatever comes next cannot know whether it has room
// for it: it starts only when this rule names its workers. Its Queue stays
// the logical one, so every other rule still sees where it belongs.
//
// Sized jobs are walked per class in queue order, core before loan before
// burst. A job goes where it fits now, best fit (the worker left with the
// fewest free slots, ties by ID); a gang goes all at once into one region
// (members may share a worker with room for both) or not at all. The first
// sized job of each worker group that fits nowhere is placed anyway on the
// eligible worker closest to fitting (most free slots counting those
// being freed by moves, then fewest running jobs, then ID): that worker
// holds its slots as they free, a reservation, and is closed to further
// placement this tick. Later jobs of the group only backfill where they fit
// now, so they never delay the head, and rule 3 launches workers for those
// that fit nowhere. A group that already has a placed job waiting gets no
// second reservation, loaned work never reserves, and elastic work
// reserves only where no pool may grow for it: a new worker comes sooner
// than a busy one empties. A reservation that has waited
// ReservationPatience moves to workers where its job fits now (see
// moveReservations). A placement its workers will never start is taken
// back before any rule runs (see unplace).
//
// Why here: it runs in two passes. Core work (and overflowed core work)
// goes after rule 1 has picked the victims a sized core job needs, so the
// job reserves the worker they are leaving, and before rule 1 counts the
// one-slot core work still short and before rule 7 overflows any, so core
// work that can start on fixed quota now is neither reclaimed for twice
// nor paid for on-demand. Loaned and elastic work goes after rules 7 and
// 2 (unlend), so a loan is placed only into fixed slots that no queued
// core work needs, as rule 2 lends; and before lend and migrate, so the
// fixed slots placed are busy when they measure room under the high
// watermark, and before rule 3, so scale-up sizes pools for only the sized
// work that found no registered worker.
func (p *planner) placeSized(keys []queueKey) {
	if len(p.ix.sized) == 0 && len(p.ix.placed) == 0 {
		return
	}
	pl := p.placerOf()
	// Rules between the two passes may change what is free.
	clear(pl.unfit)
	pl.forgetIdle()
	pl.roomMade = false
	pl.moveReservations(keys)
	for _, k := range keys {
		s := p.ix.sized[k]
		if s == nil {
			continue
		}
		for j := range s.all() {
			if p.movable(j) {
				pl.place(j)
			}
			if k.queue == QueueOverflow && !p.placing[j.ID] {
				p.binOverflow(j)
			}
		}
	}
	if keys[0].queue == QueueCore {
		// Sized core work on its way to overflow is bound for its pool too.
		for r := range p.ix.redirected {
			if r.queued() && r.sized() && r.PendingAction == Overflow {
				p.binOverflow(r.Job)
			}
		}
	}
}

// placerOf returns this tick's placer, made if need be.
func (p *planner) placerOf() *placer {
	if p.placer != nil {
		return p.placer
	}
	s := p.scr
	pl := &placer{planner: p, reserved: s.reserved, closed: s.closed,
		unfit: s.unfit, grows: s.grows, idle: s.idle, maxFree: s.maxFree, room: s.room}
	p.placer = pl
	// A placed job still queued may be a reservation waiting for its
	// slots: its group makes no other, and its workers take nothing more.
	for r := range p.ix.placed {
		if p.unplacing(r.Job) {
			continue // its placement is taken back: it holds nothing
		}
		pl.reserved[p.groupOf(r.Job)] = true
		for _, id := range r.Placed {
			if w := p.worker[id]; w != nil {
				pl.closed[w] = true
			}
		}
	}
	return pl
}

// binOverflow counts a sized overflowed job that found no worker of its
// pool as the new workers it needs there (rule 3 launches them), never as
// slots in the pool's backlog, which fragmented workers could seem to
// cover. A placed job needs none. Whether the pool's maximum has room for
// them is not asked: it moves with what later rules place this tick, and
// rule 7 asked it when it sent the job there; want caps the launch.
func (p *planner) binOverflow(j *Job) {
	if d := p.demand[j.Pool]; d != nil && !j.waitsPlaced() && j.slots() <= d.pool.SlotsPerWorker {
		d.addBins(j)
	}
}

// The sized sets rule 8 walks, in two passes: core work before rule 1
// counts what still waits, loaned and elastic work once rules 7 and 2
// have moved what they move.
var (
	sizedCore = []queueKey{
		{QueueCore, string(jobs.ClassCore)},
		{QueueOverflow, string(jobs.ClassCore)},
	}
	sizedBurst = []queueKey{
		{QueueLoan, string(jobs.ClassBurst)},
		{QueueBurst, string(jobs.ClassBurst)},
	}
)

// placeTarget is the kind of workers a sized job may run on.
type placeTarget struct {
	kind targetKind
	pool string // the overflow pool, for toPool
}

type targetKind uint8

const (
	toFixed    targetKind = iota // core and loaned burst work
	toElastic                    // spot-eligible burst work: spot or on-demand
	toOnDemand                   // other burst work
	toPool                       // overflowed core work: its on-demand pool
)

// placeGroup is a worker group of rule 8: jobs of one queue bound for the
// same kind of workers in the same region. Each gets at most one
// reservation.
type placeGroup struct {
	queue  Queue
	target placeTarget
	region string
}

func (p *planner) groupOf(j *Job) placeGroup {
	g := placeGroup{queue: j.Queue, region: j.Region}
	switch j.Queue {
	case QueueCore, QueueLoan:
		g.target.kind = toFixed
	case QueueOverflow:
		g.target = placeTarget{kind: toPool, pool: j.Pool}
	default:
		// As the elastic queues work (see ElasticHome): spot only for
		// spot-eligible work.
		g.target.kind = toElastic
		if j.home(p.cfg.MaxSpotPreemptions).OnDemand {
			g.target.kind = toOnDemand
		}
	}
	return g
}

// serves reports whether w is up, takes placed work, and is of the kind
// t places on.
func serves(w *workerRec, t placeTarget) bool {
	if w.State != WorkerUp || w.NoPlacedWork {
		return false
	}
	switch t.kind {
	case toFixed:
		return w.pool.Kind == PoolFixed
	case toElastic:
		return w.pool.Kind.Elastic()
	case toOnDemand:
		return w.pool.Kind == PoolOnDemand
	}
	return w.Pool == t.pool && w.pool.Kind == PoolOnDemand
}

// placer is one tick of rule 8.
type placer struct {
	*planner
	// reserved are the groups whose reservation is made or waiting;
	// closed the workers that hold one.
	reserved map[placeGroup]bool
	closed   map[*workerRec]bool
	// maxFree caches the most free slots of an open worker per target;
	// a placement clears it. A tick sees a handful of targets at most, so
	// a list beats a map: no hashing of the target's pool name per job.
	maxFree []targetFree
	// A tick may walk thousands of sized jobs that cannot start: these
	// remember, per shape, what was found for the first, so the rest cost
	// a map lookup. unfit holds the shapes for which no worker has room
	// now (a placement clears it); grows what growable said.
	unfit map[jobShape]bool
	grows map[jobShape]bool
	// idle holds the shapes for which nothing can happen until a
	// placement: none fits now, and their group cannot reserve (it has,
	// or must not). One lookup then settles every job of the shape.
	idle map[jobShape]bool
	// lastIdle is the shape last found in idle (lastIdleSet when there
	// is one): a queue's sized jobs come in runs of one shape, and
	// comparing with the last costs less than hashing it into idle.
	// Every clear of idle clears it too (forgetIdle).
	lastIdle    jobShape
	lastIdleSet bool
	// room lists, in worker order, the workers that had a free slot when
	// it was made: in a busy cluster most have none, and pick and mostFree
	// would otherwise walk every worker for every job they place. Within
	// a pass slots only leave a worker (take), so the list keeps every
	// worker with one free; a moved reservation gives slots back, which
	// has the list made again.
	room     []*workerRec
	roomMade bool
}

// roomy returns the workers that may have a free slot, in worker order.
func (pl *placer) roomy() []*workerRec {
	if !pl.roomMade {
		pl.room = pl.room[:0]
		for _, w := range pl.workers {
			if pl.freeSlots(w) > 0 {
				pl.room = append(pl.room, w)
			}
		}
		pl.roomMade = true
	}
	return pl.room
}

// jobShape is everything placement reads of a job that requires no
// labels, CPUs or memory: two such jobs of one shape fit the same workers.
type jobShape struct {
	g               placeGroup
	slots, replicas int
}

// shapeOf returns j's shape, and false for a job whose labels, CPUs or
// memory make it its own case.
func shapeOf(j *Job, g placeGroup) (jobShape, bool) {
	return jobShape{g: g, slots: j.slots(), replicas: j.replicas()},
		len(j.Requires) == 0 && j.CPUs == 0 && j.Memory == 0
}

// eligible reports whether w may ever run a member of j: up, of the
// group's kind, big enough, in the job's region, carrying its labels,
// with the CPUs and memory where both sides account them.
func (pl *placer) eligible(w *workerRec, j *Job, g placeGroup) bool {
	return serves(w, g.target) && canHold(w, j)
}

// canHold reports whether w could ever run a member of j: big enough, in
// its region, with its labels, and with its CPUs and memory where both
// sides account them.
func canHold(w *workerRec, j *Job) bool {
	return w.Slots >= j.slots() && j.fitsRegion(w.pool.Region) && w.carries(j.Requires, w.pool) &&
		!(j.milliCPU() > 0 && w.CPUs > 0 && milli(w.CPUs) < j.milliCPU()) &&
		!(j.Memory > 0 && w.Memory > 0 && w.Memory < j.Memory)
}

// fitsNow reports whether a member of j fits on w now, with n of its
// members already put there.
func (pl *placer) fitsNow(w *workerRec, j *Job, n int) bool {
	m := int64(n + 1)
	if pl.freeSlots(w) < (n+1)*j.slots() {
		return false
	}
	u, t := pl.use(w), pl.tick[w]
	if t == nil {
		t = &slotUse{}
	}
	if j.milliCPU() > 0 && w.CPUs > 0 && milli(w.CPUs)-u.milliCPU-t.milliCPU < m*j.milliCPU() {
		return false
	}
	return !(j.Memory > 0 && w.Memory > 0 && w.Memory-u.memory-t.memory < m*j.Memory)
}

// holds reports whether w could ever hold n members of j at once.
func (pl *placer) holds(w *workerRec, j *Job, n int) bool {
	m := int64(n)
	return n*j.slots() <= w.Slots &&
		!(j.milliCPU() > 0 && w.CPUs > 0 && milli(w.CPUs) < m*j.milliCPU()) &&
		!(j.Memory > 0 && w.Memory > 0 && w.Memory < m*j.Memory)
}

// freeing is how many slots w has free now or being freed by moves in
// flight or planned this tick: how close it is to fitting.
func (pl *placer) freeing(w *workerRec) int {
	n := pl.freeSlots(w) + pl.use(w).leaving
	if t := pl.tick[w]; t != nil {
		n += t.leaving
	}
	return n
}

// mostFree is the most free slots of an open worker that t places on.
func (pl *placer) mostFree(t placeTarget) int {
	for _, f := range pl.maxFree {
		if f.t == t {
			return f.n
		}
	}
	n := 0
	// The walk drops the workers that filled since the list was made.
	room := pl.roomy()
	kept := room[:0]
	for _, w := range room {
		free := pl.freeSlots(w)
		if free <= 0 {
			continue
		}
		kept = append(kept, w)
		if serves(w, t) && !pl.closed[w] {
			n = max(n, free)
		}
	}
	pl.room = kept
	pl.maxFree = append(pl.maxFree, targetFree{t, n})
	return n
}

// targetFree is mostFree's answer n for target t.
type targetFree struct {
	t placeTarget
	n int
}

// place places j where it fits now or, as its group's head, reserves.
// Loaned work waits while core work does: fixed slots are core's first.
func (pl *placer) place(j *Job) {
	g := pl.groupOf(j)
	sh, plain := shapeOf(j, g)
	if plain && pl.lastIdleSet && sh == pl.lastIdle {
		return
	}
	if plain && pl.idle[sh] {
		pl.lastIdle, pl.lastIdleSet = sh, true
		return
	}
	if !pl.loanFits(j) {
		// As rule 2 lends: never into slots queued core work needs.
		return
	}
	if pl.teams != nil && g.target.kind == toFixed && pl.reclaimable(j) {
		// Under team shares a loan admitted into room that has since
		// gone (its lender's work came back) does not start (rule 9).
		// Work that cannot be reclaimed was only ever admitted within
		// its team's share, and ranks before all of the team's loans
		// (see attribute): the team's own loans that started while it
		// waited for its place must not lock it out.
		if ok, _ := pl.mayTake(j, true); !ok {
			return
		}
	}
	if pl.mostFree(g.target) >= j.slots() && !(plain && pl.unfit[sh]) {
		if ws := pl.pick(j, g, false); ws != nil {
			pl.commit(j, g, ws, false)
			return
		}
		if plain {
			pl.unfit[sh] = true
		}
	}
	// Core work past its wait goes to on-demand capacity (rule 7) rather
	// than wait held for slots of a quota that is full.
	if g.target.kind == toFixed && pl.overflowInstead(j) {
		return
	}
	// A loan never reserves: fixed slots held for borrowed work would keep
	// core work out, and a held job cannot be reclaimed.
	if pl.reserved[g] || j.Queue == QueueLoan {
		if plain {
			pl.markIdle(sh)
		}
		return
	}
	grows, known := pl.grows[sh]
	if !plain || !known {
		grows = pl.growable(j, g)
		if plain {
			pl.grows[sh] = grows
		}
	}
	if grows {
		if plain {
			pl.markIdle(sh)
		}
		return
	}
	if ws := pl.pick(j, g, true); ws != nil {
		pl.commit(j, g, ws, true)
		return
	}
	// No worker could ever hold it: neither can one for any job of its
	// shape until a placement changes what is open.
	if plain {
		pl.markIdle(sh)
	}
}

// markIdle records that nothing can happen for shape sh until a
// placement.
func (pl *placer) markIdle(sh jobShape) {
	pl.idle[sh] = true
	pl.lastIdle, pl.lastIdleSet = sh, true
}

// forgetIdle empties idle: a placement or a moved reservation may have
// made room for any shape.
func (pl *placer) forgetIdle() {
	clear(pl.idle)
	pl.lastIdleSet = false
}

// growable reports whether an elastic pool may grow for j, so it waits
// for a new worker (rule 3 launches one) rather than reserve a busy one,
// which may run for hours: a pool that may run it, is not stocked out,
// and whose registered workers leave room under its maximum for the new
// workers j needs. Workers being launched count as room, not against it:
// they come up empty, and a launch this rule led to must not turn the
// answer around next tick. A pool whose registered workers fill its
// maximum cannot grow, so the job reserves: otherwise smaller jobs would
// keep taking the slots that free ahead of it. The room is read before
// this tick's rules take any (rules 7 and 3 come later), so the answer
// holds until workers register or leave.
func (pl *placer) growable(j *Job, g placeGroup) bool {
	if g.target.kind == toFixed {
		return false
	}
	for _, d := range pl.elastic {
		w := workerRec{Worker: Worker{State: WorkerUp, Pool: d.pool.Name}, pool: d.pool}
		if !serves(&w, g.target) || !pl.mayRunSized(d, j, true) || d.unavailable(pl.cfg) {
			continue
		}
		// mayRunSized: a worker of the pool holds a member.
		if need := ceilDiv(j.replicas(), d.slots()/j.slots()); d.pool.MaxWorkers >= need && d.limit()-d.active >= need {
			return true
		}
	}
	return false
}

// pick chooses a worker per member of j, all in one region, or returns
// nil. Without reserve, only where the members fit now, best fit; with
// it, on the workers closest to fitting. Of several regions where a gang
// goes, the one it packs tightest (or, reserving, is closest) wins.
func (pl *placer) pick(j *Job, g placeGroup, reserve bool) []*workerRec {
	var cands []*workerRec
	// Where it fits now, a member needs a free slot.
	all := pl.workers
	if !reserve {
		all = pl.roomy()
	}
	for _, w := range all {
		if !pl.closed[w] && pl.eligible(w, j, g) && (reserve || pl.fitsNow(w, j, 0)) {
			cands = append(cands, w)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	if !j.gang() {
		return pl.members(j, cands, reserve)
	}
	slices.SortStableFunc(cands, func(a, b *workerRec) int { return cmp.Compare(a.pool.Region, b.pool.Region) })
	var best []*workerRec
	bestScore := 0
	for lo := 0; lo < len(cands); {
		hi := lo
		for hi < len(cands) && cands[hi].pool.Region == cands[lo].pool.Region {
			hi++
		}
		ws := pl.members(j, cands[lo:hi], reserve)
		lo = hi
		if ws == nil {
			continue
		}
		score := 0
		for _, w := range ws {
			if reserve {
				score -= pl.freeing(w)
			} else {
				score += pl.freeSlots(w)
			}
		}
		if best == nil || score < bestScore {
			best, bestScore = ws, score
		}
	}
	return best
}

// members picks a worker per member of j from cands (in one region for a
// gang), each member in turn on the best of them counting the members
// before it; nil if a member finds none.
func (pl *placer) members(j *Job, cands []*workerRec, reserve bool) []*workerRec {
	k := j.slots()
	ws := make([]*workerRec, 0, j.replicas())
	for range j.replicas() {
		var pick *workerRec
		score := 0
		for _, w := range cands {
			n := 0
			for _, x := range ws {
				if x == w {
					n++
				}
			}
			var s int
			if reserve {
				if !pl.holds(w, j, n+1) {
					continue
				}
				// Most free (or freeing) first, then fewest running jobs;
				// cands are in ID order, so the first of a tie wins.
				s = -(pl.freeing(w)-n*k)*(1<<20) + len(w.jobs)
			} else {
				if !pl.fitsNow(w, j, n) {
					continue
				}
				s = pl.freeSlots(w) - (n+1)*k
			}
			if pick == nil || s < score {
				pick, score = w, s
			}
		}
		if pick == nil {
			return nil
		}
		ws = append(ws, pick)
	}
	return ws
}

// take counts a member of j as placed on w this tick: its slots, CPUs and
// memory taken, and (with busy) its slots as busy fixed quota, as
// measureFixed counts it next tick.
func (pl *placer) take(w *workerRec, j *Job, busy bool) {
	k := j.slots()
	t := pl.tickUse(w)
	if pl.fixedUp(w) && w.Slots > 0 {
		if busy {
			pl.fixed.Busy += k
		}
		pl.freeFixed -= max(w.Slots-pl.rawBusy(w, t.used), 0) - max(w.Slots-pl.rawBusy(w, t.used+k), 0)
	}
	t.used += k
	t.milliCPU += j.milliCPU()
	t.memory += max(j.Memory, 0)
	if d := pl.demand[w.Pool]; d != nil && w.active() {
		held := pl.use(w).held + t.used - k // before this member
		d.running += pl.heldRoom(w, held+k) - pl.heldRoom(w, held)
		// From the next tick w holds slots for j and so offers no room
		// beside its shares (appendGaps): none this tick either.
		d.dropGaps(w)
	}
}

// give undoes take for a member of j on w: slots held for it there are
// counted free this tick. It reads only the planner, so rule 8's
// take-backs use it before the placer is made.
func (pl *planner) give(w *workerRec, j *Job) {
	k := j.slots()
	t := pl.tickUse(w)
	if pl.fixedUp(w) && w.Slots > 0 {
		pl.fixed.Busy -= k
		pl.freeFixed += max(w.Slots-pl.rawBusy(w, t.used-k), 0) - max(w.Slots-pl.rawBusy(w, t.used), 0)
	}
	t.used -= k
	t.milliCPU -= j.milliCPU()
	t.memory -= max(j.Memory, 0)
	if d := pl.demand[w.Pool]; d != nil && w.active() {
		held := pl.use(w).held + t.used + k // before this member left
		d.running += pl.heldRoom(w, held-k) - pl.heldRoom(w, held)
	}
}

// heldByOther reports whether a queued placed job other than j holds w.
func (pl *placer) heldByOther(w *workerRec, j *Job) bool {
	for r := range pl.ix.placed {
		if r.Job != j && !pl.placing[r.ID] && !pl.unplacing(r.Job) && slices.Contains(r.Placed, w.ID) {
			return true
		}
	}
	return false
}

// ReservationPatience is how long a placement waits before rule 8 may
// move it (exported for the simulator, which wakes its controller then):
// longer than a placed job takes to start where its slots are free (the
// worker's poll, its 2 s recheck of a held delivery, a gang's claims), so
// a placement older than this is a reservation whose slots are still
// busy.
const ReservationPatience = 15 * time.Second

// moveReservations is the part of rule 8 that keeps a reservation from
// waiting on a busy worker while another has room: a placed job of keys
// that has waited ReservationPatience and now fits on open workers (for a
// gang, all in one region) is placed there, as a new attempt; the slots it
// held free next tick. The old workers stay closed this tick, and its
// group makes no new reservation, so nothing moves twice in a tick.
func (pl *placer) moveReservations(keys []queueKey) {
	var waiting []*Job
	for r := range pl.ix.placed {
		j := r.Job
		_, moved := pl.moved[j.ID]
		// A placement of unknown age (a record written before placements
		// were dated) is left where it is: it may be about to start.
		if slices.Contains(keys, queueKey{j.Queue, string(j.Class)}) && j.free() && !moved && !pl.placing[j.ID] &&
			!j.PlacedAt.IsZero() && pl.now.Sub(j.PlacedAt) >= ReservationPatience {
			waiting = append(waiting, j)
		}
	}
	slices.SortFunc(waiting, byQueueOrder)
	for _, j := range waiting {
		g := pl.groupOf(j)
		ws := pl.moveTo(j, g)
		held := false
		if ws == nil && pl.holdsRoom(j) {
			// The slots it holds count free for it, and the workers only
			// it holds open: a gang reserved on a busy worker beside one
			// with room for all its members moves there rather than wait
			// on the busy one. Asked only when it fits nowhere else, so
			// every move found without them stays as it was.
			held = true
			opened := pl.unreserve(j)
			if ws = pl.moveTo(j, g); ws == nil {
				pl.rereserve(j, opened)
				continue
			}
		}
		if ws == nil {
			continue
		}
		ids := make([]string, len(ws))
		for i, w := range ws {
			ids[i] = w.ID
			pl.take(w, j, true)
		}
		// The slots it held on its old workers free: count them free this
		// tick, as the next will, and open the workers no other placement
		// holds, so the plan in flight plans nothing more.
		if !held {
			for _, id := range j.Placed {
				if w := pl.worker[id]; w != nil {
					pl.give(w, j)
				}
			}
			for _, id := range j.Placed {
				if w := pl.worker[id]; w != nil && !pl.heldByOther(w, j) {
					pl.closed[w] = false
				}
			}
		}
		pl.roomMade = false
		pl.maxFree = pl.maxFree[:0]
		clear(pl.unfit)
		pl.forgetIdle()
		pl.placing[j.ID] = true
		pl.add(Action{Kind: Place, Job: j.ID, Workers: ids, Queue: j.Queue, Rule: 8,
			Reason: fmt.Sprintf("reserved on %s for %s; fits now on %s: the reservation moves",
				strings.Join(j.Placed, ","), pl.now.Sub(j.PlacedAt).Round(time.Second), strings.Join(ids, ","))}, j)
	}
}

// loanFits reports whether placing j, when it is a loan, leaves the free
// fixed slots enough for queued core work and, for a share while core
// work waits, for the loans left: a share placed takes a whole slot but
// may free none of the loans' count, where its sum with the others
// filled one, and rule 2 would unlend another loan on the next tick for
// it. Without queued core work rule 2 unlends nothing, so the share goes.
func (pl *placer) loanFits(j *Job) bool {
	if j.Queue != QueueLoan {
		return true
	}
	free := pl.freeFixed - j.weight()
	if j.Share == 0 || pl.coreQueued.slots() == 0 {
		return pl.coreQueued.slots() <= free
	}
	left := pl.loans
	left.sub(j)
	return pl.coreQueued.slots()+left.slots() <= free
}

// moveTo is where waiting placed job j fits now, nil if nowhere.
func (pl *placer) moveTo(j *Job, g placeGroup) []*workerRec {
	if pl.mostFree(g.target) < j.slots() {
		return nil
	}
	if !pl.loanFits(j) {
		return nil // as place: never into slots queued core work needs
	}
	return pl.pick(j, g, false)
}

// holdsRoom reports whether a worker j is placed on has a free slot,
// which j holds: only then can counting its own held slots help it.
func (pl *placer) holdsRoom(j *Job) bool {
	for _, id := range j.Placed {
		if w := pl.worker[id]; w != nil && pl.freeSlots(w) > 0 {
			return true
		}
	}
	return false
}

// unreserve counts the slots placed job j holds free and opens the
// workers no other placement holds, for moveReservations to ask where
// j fits with them; it returns the workers it opened, for rereserve.
func (pl *placer) unreserve(j *Job) []*workerRec {
	var opened []*workerRec
	for _, id := range j.Placed {
		if w := pl.worker[id]; w != nil {
			pl.give(w, j)
		}
	}
	for _, id := range j.Placed {
		if w := pl.worker[id]; w != nil && pl.closed[w] && !pl.heldByOther(w, j) && !slices.Contains(opened, w) {
			pl.closed[w] = false
			opened = append(opened, w)
		}
	}
	pl.forgetFree()
	return opened
}

// rereserve undoes unreserve: j stays where it is placed.
func (pl *placer) rereserve(j *Job, opened []*workerRec) {
	for _, id := range j.Placed {
		if w := pl.worker[id]; w != nil {
			pl.take(w, j, true)
		}
	}
	for _, w := range opened {
		pl.closed[w] = true
	}
	pl.forgetFree()
}

// forgetFree drops what the placer remembers of free room, after slots
// were counted free or busy outside take's usual course.
func (pl *placer) forgetFree() {
	pl.roomMade = false
	pl.maxFree = pl.maxFree[:0]
	clear(pl.unfit)
}

// commit plans the Place of j on ws and counts it: its slots are busy on
// those workers from now on (as far as they have them free; a reservation
// holds the rest as they free), and no longer queued.
func (pl *placer) commit(j *Job, g placeGroup, ws []*workerRec, reserve bool) {
	k := j.slots()
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
		pl.take(w, j, true)
		if reserve {
			pl.closed[w] = true
		}
	}
	switch j.Queue {
	case QueueCore:
		pl.coreQueued.sub(j)
	case QueueLoan:
		pl.loans.sub(j)
	}
	pl.maxFree = pl.maxFree[:0]
	clear(pl.unfit)
	pl.forgetIdle()
	desc := fmt.Sprintf("%d slots", k)
	if j.gang() {
		desc = fmt.Sprintf("gang of %d x %d slots in region %q", j.replicas(), k, ws[0].pool.Region)
	}
	reason := fmt.Sprintf("%s fits now; best fit leaves %d free slots", desc, pl.freeSlots(ws[0]))
	if reserve {
		pl.reserved[g] = true
		reason = fmt.Sprintf("%s fits on no eligible worker now; reserved on the closest (%d free or freeing), "+
			"which holds its slots as they free and takes no new one-slot work", desc, pl.freeing(ws[0])+k)
	}
	pl.placing[j.ID] = true
	pl.add(Action{Kind: Place, Job: j.ID, Workers: ids, Queue: j.Queue, Rule: 8, Reason: reason}, j)
}
