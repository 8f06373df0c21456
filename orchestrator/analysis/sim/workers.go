package sim

import (
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// workerState is where a worker is in its life.
type workerState uint8

const (
	wsUp       workerState = iota // taking work
	wsDraining                    // finishing what it runs, taking nothing
	// wsDead: a fixed worker that died and is not yet declared dead. It
	// takes nothing and its jobs make no progress, but the policy still
	// sees it up (deaths.go).
	wsDead
	wsGone // released or reclaimed
)

// worker is one registered worker. Elastic workers register in state up
// once their launch's StartupDelay has passed; the policy's "starting"
// state is not modelled, the launch book stands for it.
type worker struct {
	id    string
	tasks []int32 // running and leaving tasks, in no order
	// holds are the sized tasks placed here that wait for free slots, in
	// the order they were placed: while one waits, the worker takes no
	// other work (a reservation).
	holds []int32
	// rooms are the thousandths of a GPU used on each slot that jobs
	// share (0: closed, reused by the next that opens): a slot holding
	// any share counts as busy, as a GPU worker counts a shared GPU.
	rooms []int16
	// requested is when the launch was asked for: billing starts there, as
	// a provider bills the boot time too.
	requested time.Duration
	idleSince time.Duration
	pool      int32
	slots     int32
	busy      int32
	pos       int32 // index in sim.live
	ipos      int32 // index in sim.idle, -1 when not there
	gen       uint32
	state     workerState

	// unused is what an elastic worker has left unused since its last
	// change (see noteUnused).
	unused unused
}

// poolState is a pool with its workers and what it has done.
type poolState struct {
	policy.Pool
	elastic  bool
	workers  []int32 // live workers, in ID order
	free     int     // free slots on its up workers
	paid     int     // workers billed now: live ones and launches in flight
	overflow taskQueue
	use      PoolUsage
	waits    poolWaits
}

func (s *sim) newWorker(pi, slots int32, requested time.Duration) int32 {
	wi := int32(len(s.workers))
	s.workers = append(s.workers, worker{
		id: indexID('w', wi), requested: requested, idleSince: s.now,
		pool: pi, slots: slots, pos: int32(len(s.live)), ipos: -1, gen: 1,
	})
	s.live = append(s.live, wi)
	p := &s.pools[pi]
	p.workers = append(p.workers, wi)
	p.free += int(slots)
	s.dirty = true
	s.workerChanged(wi)
	return wi
}

// occupy puts a task on the worker's free slots; a share goes onto a
// shared slot with room for it, or opens one.
func (s *sim) occupy(wi, ti int32) {
	k := s.tasks[ti].slots
	if s.tasks[ti].share > 0 {
		k = s.packShare(wi, ti)
	}
	s.tasks[ti].wpos = s.put(wi, ti, k)
}

// packShare puts share task ti on worker wi's fullest shared slot with
// room for it (best fit, as a GPU worker packs shares), else on a slot it
// opens; it returns the whole slots this takes, 0 or 1.
func (s *sim) packShare(wi, ti int32) int32 {
	w, t := &s.workers[wi], &s.tasks[ti]
	best, closed := -1, -1
	for i, used := range w.rooms {
		switch {
		case used == 0:
			if closed < 0 {
				closed = i
			}
		case used+t.share <= 1000 && (best < 0 || used > w.rooms[best]):
			best = i
		}
	}
	if best >= 0 {
		w.rooms[best] += t.share
		t.room = int16(best)
		return 0
	}
	if closed < 0 {
		closed = len(w.rooms)
		w.rooms = append(w.rooms, 0)
	}
	w.rooms[closed] = t.share
	t.room = int16(closed)
	return 1
}

// unpackShare takes share task ti off its shared slot and returns the
// whole slots this frees, 1 when the slot is left empty.
func (s *sim) unpackShare(wi, ti int32) int32 {
	w, t := &s.workers[wi], &s.tasks[ti]
	if w.rooms[t.room] -= t.share; w.rooms[t.room] == 0 {
		return 1
	}
	return 0
}

// roomFor reports whether a share of share thousandths fits a shared slot
// already open on worker w (share 1: whether any has room left).
func roomFor(w *worker, share int16) bool {
	for _, used := range w.rooms {
		if used > 0 && used+share <= 1000 {
			return true
		}
	}
	return false
}

// put puts task ti on k of the worker's free slots and returns its index
// in the worker's tasks.
func (s *sim) put(wi, ti, k int32) int32 {
	w := &s.workers[wi]
	if s.teams != nil && !s.pools[w.pool].elastic {
		s.teams.use(s, &s.tasks[ti], float64(k))
	}
	w.busy += k
	pos := int32(len(w.tasks))
	w.tasks = append(w.tasks, ti)
	if w.state == wsUp {
		s.pools[w.pool].free -= int(k)
	}
	s.workerChanged(wi)
	return pos
}

// vacate takes a task off its worker, which then takes queued work.
func (s *sim) vacate(wi, ti int32) {
	k := s.tasks[ti].slots
	if s.tasks[ti].share > 0 {
		k = s.unpackShare(wi, ti)
	}
	s.take(wi, ti, k, s.tasks[ti].wpos)
	s.freed(wi)
	s.dirty = true
}

// freed lets worker wi take queued work into the slots just freed: at
// once, or while a plan is applied once it is (see place), so that a
// stop that frees its slots at once does not start a job a later action
// of the plan moves.
func (s *sim) freed(wi int32) {
	switch {
	case s.workers[wi].state != wsUp:
	case s.applying:
		s.refill = append(s.refill, wi)
	default:
		s.fill(wi)
	}
}

// vacateGang takes a gang off every member's worker at the same instant,
// then lets each take queued work.
func (s *sim) vacateGang(ti int32) {
	t := &s.tasks[ti]
	ws := t.gws
	for i, wi := range ws {
		s.take(wi, ti, t.gk[i], t.gpos[i])
	}
	t.clearMembers()
	for _, wi := range ws {
		s.freed(wi)
	}
	s.dirty = true
}

// take takes task ti, holding k slots at index i of its tasks, off
// worker wi.
func (s *sim) take(wi, ti, k, i int32) {
	w := &s.workers[wi]
	if s.teams != nil && !s.pools[w.pool].elastic {
		s.teams.use(s, &s.tasks[ti], -float64(k))
	}
	w.busy -= k
	// Swap-delete: the quota is one worker with every fixed slot, so a
	// search would cost a scan of the quota per finished job.
	n := len(w.tasks) - 1
	w.tasks[i] = w.tasks[n]
	s.setPos(w.tasks[i], wi, i)
	w.tasks = w.tasks[:n]
	if w.busy == 0 {
		w.idleSince = s.now
	}
	s.workerChanged(wi)
	if w.state == wsUp {
		s.pools[w.pool].free += int(k)
	}
}

// setPos records that task ti is at index i of worker wi's tasks.
func (s *sim) setPos(ti, wi, i int32) {
	t := &s.tasks[ti]
	if !t.gang() {
		t.wpos = i
		return
	}
	for j, w := range t.gws {
		if w == wi {
			t.gpos[j] = i
			return
		}
	}
}

// fill lets an up worker take queued work while it has free slots: first
// the sized tasks placed on it, in order, each once its slots are free;
// while one waits, nothing else.
func (s *sim) fill(wi int32) {
	for {
		w := &s.workers[wi]
		if w.state != wsUp {
			return
		}
		if len(w.holds) > 0 {
			ti := w.holds[0]
			if s.tasks[ti].gang() {
				if !s.gangReady(ti) {
					return
				}
				s.startGang(ti)
				continue
			}
			if w.slots-w.busy < s.tasks[ti].slots {
				return
			}
			w.holds = w.holds[1:]
			s.start(ti, wi)
			continue
		}
		full := w.busy >= w.slots
		if full && !roomFor(w, 1) {
			return
		}
		ti, ok := s.nextFor(w)
		// A full worker still takes a share that fits a shared slot; the
		// first job that does not fit ends the take and stays first in
		// line, as a GPU worker's take does.
		if !ok || full && (s.tasks[ti].share == 0 || !roomFor(w, s.tasks[ti].share)) {
			return
		}
		s.start(ti, wi)
	}
}

// gangReady reports whether every worker of placed gang ti is up, has
// the gang first among its holds and its slots free: the members then
// start together.
func (s *sim) gangReady(ti int32) bool {
	t := &s.tasks[ti]
	for i, wi := range t.gws {
		w := &s.workers[wi]
		if w.state != wsUp || len(w.holds) == 0 || w.holds[0] != ti || w.slots-w.busy < t.gk[i] {
			return false
		}
	}
	return true
}

// startGang starts a ready gang on all its members' workers at once;
// each of them then takes what waits behind it. The fill that found the
// gang ready may be on any member's worker, so every one is filled: one
// left out would keep a free slot beside queued work until something
// else freed a slot there.
func (s *sim) startGang(ti int32) {
	t := &s.tasks[ti]
	for _, wi := range t.gws {
		w := &s.workers[wi]
		w.holds = w.holds[1:]
	}
	ws := slices.Clone(t.gws)
	s.start(ti, t.members[0])
	for _, wi := range ws {
		s.fill(wi)
	}
}

// nextFor is the task the worker takes next, the way Ballast's workers
// consume queues: fixed workers core, then loan (strict priority);
// on-demand workers the core work overflowed to their pool, then burst;
// spot workers only the spot-eligible burst work.
func (s *sim) nextFor(w *worker) (int32, bool) {
	p := &s.pools[w.pool]
	switch p.Kind {
	case policy.PoolFixed:
		if e, ok := s.core.head(s.valid); ok {
			return e.task, true
		}
		e, ok := s.loan.head(s.valid)
		return e.task, ok
	case policy.PoolSpot:
		e, ok := s.burstSpot.head(s.valid)
		return e.task, ok
	}
	if e, ok := p.overflow.head(s.valid); ok {
		return e.task, true
	}
	a, okA := s.burstSpot.head(s.valid)
	b, okB := s.burstOther.head(s.valid)
	switch {
	case okA && (!okB || a.before(b)):
		return a.task, true
	case okB:
		return b.task, true
	}
	return 0, false
}

// place gives a newly queued task a free slot if a worker that may run it
// has one. Workers take from their queues' heads, and no older task that a
// free slot may run is ever left waiting, so the task placed is this one.
// A burst task tries the cheapest pool first, and within a pool the oldest
// worker: packing work onto old workers lets the newest go idle and be
// released.
func (s *sim) place(ti int32) {
	if s.applying {
		// Workers take moved work once the whole plan is applied, as live
		// workers poll after the controller's writes: every action of a
		// plan then meets the model its snapshot described.
		s.unplaced = append(s.unplaced, ti)
		return
	}
	t := &s.tasks[ti]
	if t.sized() {
		if t.placed >= 0 {
			s.fill(t.placed)
		}
		return // it waits for the policy's Place
	}
	switch t.queue {
	case qCore, qLoan:
		for _, wi := range s.fixedWs {
			if s.fill(wi); t.state != tsQueued {
				return
			}
		}
	case qOverflow:
		s.fillPool(t.ovPool, ti)
	case qBurst:
		for _, pi := range s.byPrice {
			if s.pools[pi].Kind == policy.PoolSpot && !t.spotOK {
				continue
			}
			if s.fillPool(pi, ti); t.state != tsQueued {
				return
			}
		}
	}
}

// fillPool lets the pool's workers with free slots take work until task ti
// has started or no slot is left.
func (s *sim) fillPool(pi, ti int32) {
	p := &s.pools[pi]
	share := s.tasks[ti].share > 0
	for _, wi := range p.workers {
		if p.free <= 0 && !share || s.tasks[ti].state != tsQueued {
			return
		}
		s.fill(wi)
	}
}

// scaleUp books a launch of n workers; they boot after the pool's
// StartupDelay.
func (s *sim) scaleUp(pi int32, n int) {
	li := int32(len(s.launches))
	s.launches = append(s.launches, launch{pool: pi, count: n, requested: s.now})
	s.booting = append(s.booting, li)
	s.events.push(event{at: s.now + s.pools[pi].StartupDelay, kind: evBoot, idx: li})
	s.pay(pi, n)
}

// boot turns a launch into workers, which take queued work at once.
func (s *sim) boot(li int32) {
	s.booting = slices.DeleteFunc(s.booting, func(x int32) bool { return x == li })
	l := s.launches[li]
	p := &s.pools[l.pool]
	first := int32(len(s.workers))
	for range l.count {
		wi := s.newWorker(l.pool, int32(p.SlotsPerWorker), l.requested)
		p.use.Launched++
		if p.Kind == policy.PoolSpot && s.spotRate > 0 {
			// Reclaims are a Poisson process per worker: one exponential
			// lifetime drawn at boot is the same thing.
			life := time.Duration(s.rng.ExpFloat64() / s.spotRate * float64(time.Hour))
			s.events.push(event{at: s.now + life, kind: evSpotReclaim, idx: wi, gen: s.workers[wi].gen})
		}
	}
	// The pool's older workers had no free slot that queued work could
	// use, so only the new ones can take any.
	for wi := first; wi < int32(len(s.workers)); wi++ {
		s.fill(wi)
	}
}

// drain stops a worker from taking work; what was placed on it waits to
// be placed again.
func (s *sim) drain(wi int32) {
	w := &s.workers[wi]
	s.pools[w.pool].free -= int(w.slots - w.busy)
	w.state = wsDraining
	s.unhold(w)
	s.dirty = true
	s.workerChanged(wi)
}

// retire removes a worker and bills it up to now.
func (s *sim) retire(wi int32) {
	w := &s.workers[wi]
	p := &s.pools[w.pool]
	if w.state == wsUp {
		p.free -= int(w.slots - w.busy)
	}
	w.state = wsGone
	w.gen++
	s.unhold(w)
	s.ix.RemoveWorker(w.id)
	if w.ipos >= 0 {
		s.dropIdle(w)
	}
	s.bill(w, s.now)
	s.pay(w.pool, -1)
	p.workers = slices.DeleteFunc(p.workers, func(x int32) bool { return x == wi })
	last := s.live[len(s.live)-1]
	s.live[w.pos] = last
	s.workers[last].pos = w.pos
	s.live = s.live[:len(s.live)-1]
	w.pos = -1
	s.dirty = true
}

// spotReclaim is the provider taking a spot worker back: every task on it
// stops at once and is requeued, losing its work since its last checkpoint.
func (s *sim) spotReclaim(wi int32) {
	w := &s.workers[wi]
	ts := slices.Clone(w.tasks)
	s.pools[w.pool].use.Reclaimed++
	s.retire(wi)
	for _, ti := range ts {
		t := &s.tasks[ti]
		if t.state == tsLeaving {
			// Already counted as a policy stop; it just lands early.
			s.land(ti, t.dest)
			continue
		}
		s.stop(ti, stopSpot, qBurst)
	}
}

// bill charges a worker from its launch request to until, by the pool's
// billing: policy.Pool.PaidUntil says what a worker released then has
// paid for. It is asked about the last instant of the life, as the cost
// ledger does: at an exact unit boundary PaidUntil counts the next unit as
// begun, which is right for "may I still release for free" but would bill
// a worker released after exactly one hour for two.
func (s *sim) bill(w *worker, until time.Duration) {
	p := &s.pools[w.pool]
	if !p.elastic {
		return
	}
	s.flushUnused(w, until)
	start := s.at(w.requested)
	paid := max(p.PaidUntil(start, s.at(until).Add(-time.Nanosecond)).Sub(start), until-w.requested)
	p.use.WorkerHours += (until - w.requested).Hours()
	p.use.BilledHours += paid.Hours()
	p.use.Cost += paid.Hours() * p.PricePerSlotHour * float64(w.slots)
}

// pay tracks how many elastic workers are being paid for.
func (s *sim) pay(pi int32, n int) {
	p := &s.pools[pi]
	p.paid += n
	p.use.PeakWorkers = max(p.use.PeakWorkers, p.paid)
	s.st.paidElastic += n
	s.st.peakElastic = max(s.st.peakElastic, s.st.paidElastic)
}

// hold places queued sized task ti on worker wi: it starts there once the
// slots are free, and the worker takes nothing else meanwhile.
func (s *sim) hold(ti, wi int32) {
	t := &s.tasks[ti]
	t.placed = wi
	s.placedNow(ti)
	w := &s.workers[wi]
	w.holds = append(w.holds, ti)
	s.refresh(ti)
	s.workerChanged(wi)
	s.dirty = true
}

// holdGang places queued gang ti with member i on ws[i]: every one of
// its workers holds it, and it starts once all have its slots free.
func (s *sim) holdGang(ti int32, ws []int32) {
	t := &s.tasks[ti]
	t.setMembers(ws)
	t.placed = ws[0]
	s.placedNow(ti)
	for _, wi := range t.gws {
		w := &s.workers[wi]
		w.holds = append(w.holds, ti)
		s.workerChanged(wi)
	}
	s.refresh(ti)
	s.dirty = true
}

// placedNow notes that task ti was placed now: rule 8 may move the
// reservation once it is ReservationPatience old, so the run wakes then.
func (s *sim) placedNow(ti int32) {
	s.tasks[ti].placedAt = s.now
	s.youngHolds = append(s.youngHolds, heldEntry{task: ti, at: s.now})
}

// heldEntry is a placement made at at, for the wake-up of rule 8.
type heldEntry struct {
	task int32
	at   time.Duration
}

// unholdTask takes queued task ti's placement back, as a reservation that
// rule 8 moves: its workers stop holding it and may take other work once
// the plan is applied.
func (s *sim) unholdTask(ti int32) {
	t := &s.tasks[ti]
	ws := []int32{t.placed}
	if t.gang() {
		ws = slices.Clone(t.gws)
	}
	for _, wi := range ws {
		w := &s.workers[wi]
		w.holds = slices.DeleteFunc(w.holds, func(x int32) bool { return x == ti })
		s.workerChanged(wi)
		s.refill = append(s.refill, wi)
	}
	if t.gang() {
		t.clearMembers()
	}
	t.placed = -1
	s.refresh(ti)
}

// unhold sends the tasks placed on a worker that takes no more work back
// to waiting for a placement. A gang placed there leaves all its
// workers' holds, and those may then take other work.
func (s *sim) unhold(w *worker) {
	holds := w.holds
	w.holds = nil
	for _, ti := range holds {
		t := &s.tasks[ti]
		if t.gang() {
			for _, wj := range t.gws {
				o := &s.workers[wj]
				if len(o.holds) == 0 {
					continue
				}
				o.holds = slices.DeleteFunc(o.holds, func(x int32) bool { return x == ti })
				s.refill = append(s.refill, wj)
			}
			t.clearMembers()
		}
		t.placed = -1
		s.refresh(ti)
	}
	if !s.applying {
		s.doRefill()
	}
}

// doRefill lets the workers a gang stopped holding take queued work.
func (s *sim) doRefill() {
	for len(s.refill) > 0 {
		wi := s.refill[0]
		s.refill = s.refill[1:]
		s.fill(wi)
	}
	s.refill = s.refill[:0]
}
