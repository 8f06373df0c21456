package sim

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// DefaultWorkerTTL is the delay before a dead fixed worker's jobs are
// requeued when Options.WorkerTTL is zero: the live controller's default
// worker_ttl (a worker silent for longer is declared dead).
const DefaultWorkerTTL = 4 * time.Second

// FixedDeath is one death of a fixed worker: the process or machine
// stops at At (from the trace start) and the worker registers again Down
// later, or once it has been declared dead if that is later.
type FixedDeath struct {
	// Worker is the index of the fixed worker among the quota's workers
	// in ID order: pool by pool in Options order, each pool's cut into
	// machines (see Options.FixedWorkerSlots and FixedSlotsByPool); 0 is
	// the one worker of an undivided quota.
	Worker int
	At     time.Duration
	Down   time.Duration
}

// deathSeedMix sets the deaths' generator apart from the spot reclaims'.
const deathSeedMix = 0xdeadbeefcafe0001

// prepareDeaths checks the deaths of Options against the quota's
// workers, once the quotas are known.
func (s *setup) prepareDeaths(o Options, bad func(string, ...any)) {
	s.deathRate, s.downtime, s.ttl = o.FixedDeathRate, o.FixedDowntime, o.WorkerTTL
	if s.ttl == 0 {
		s.ttl = DefaultWorkerTTL
	}
	if s.ttl < 0 {
		bad("worker_ttl is %v; write 0 for the controller's default of %v, or a positive delay", s.ttl, DefaultWorkerTTL)
	}
	if !(s.deathRate >= 0) || math.IsInf(s.deathRate, 0) {
		bad("fixed_death_rate is %v; it must be a finite rate >= 0", s.deathRate)
	}
	if s.deathRate > 0 && s.downtime <= 0 {
		bad("fixed_downtime is %v; a fixed_death_rate needs a positive downtime", s.downtime)
	}
	if s.deathRate > 0 && len(o.FixedDeaths) > 0 {
		bad("give fixed_deaths or fixed_death_rate, not both")
	}
	n := s.fixedWorkers()
	s.deaths = slices.Clone(o.FixedDeaths)
	for i, d := range s.deaths {
		if d.Worker < 0 || d.Worker >= n {
			bad("fixed_deaths[%d].worker is %d; the quota has %d fixed workers, 0 to %d", i, d.Worker, n, n-1)
		}
		if d.At < 0 || d.Down <= 0 {
			bad("fixed_deaths[%d] dies at %v for %v; the time must be >= 0 and the downtime positive", i, d.At, d.Down)
		}
	}
	slices.SortStableFunc(s.deaths, func(a, b FixedDeath) int {
		return cmp.Or(cmp.Compare(a.Worker, b.Worker), cmp.Compare(a.At, b.At))
	})
	for i := 1; i < len(s.deaths); i++ {
		a, b := s.deaths[i-1], s.deaths[i]
		if a.Worker == b.Worker && b.At < a.At+max(a.Down, s.ttl) {
			bad("fixed worker %d dies at %v while down since %v; it is back at %v", b.Worker, b.At, a.At, a.At+max(a.Down, s.ttl))
		}
	}
	slices.SortStableFunc(s.deaths, func(a, b FixedDeath) int { return cmp.Compare(a.At, b.At) })
}

// fixedWorkers is how many workers startQuotas cuts the quotas into.
func (s *setup) fixedWorkers() int {
	n := 0
	for _, q := range s.quotas {
		if q.slots > 0 && q.size > 0 {
			n += (q.slots + q.size - 1) / q.size
		}
	}
	return n
}

// A death runs in three steps, as live:
//
//   - die: the worker stops. Its jobs make no progress from then on (they
//     are halted), and it takes no work, but the policy does not know:
//     it still sees the worker up with its jobs running, may place work
//     on it or reclaim its jobs.
//   - detect, WorkerTTL later: the controller declares it dead. It leaves
//     the policy's view (and the fixed capacity), what was placed on it
//     waits for another place, and its jobs are requeued readmitted, to
//     the head of the queue they were taken from (a job the policy was
//     stopping to the queue the policy asked for; under team shares a
//     core job to held, to wait for rule 9's admission again), resuming
//     from their last checkpoint before the death.
//   - revive, Down after the death (or at detection if later): it
//     registers again with every slot free.
//
// death is one scheduled death; the events name it by its index in
// sim.deathBook.
type death struct {
	worker   int32 // index in s.workers
	at, down time.Duration
	random   bool // drawn from the rate: the next is drawn at revival
	died     bool // it happened (see die)
}

// startDeaths books the deaths: the listed ones, or each fixed worker's
// first under the rate.
func (s *sim) startDeaths() {
	if s.deathRate > 0 {
		s.deathRng = rand.New(rand.NewPCG(s.seed^deathSeedMix, s.seed))
		for _, wi := range s.fixedWs {
			s.nextDeath(wi)
		}
		return
	}
	for _, d := range s.deaths {
		s.bookDeath(death{worker: s.fixedWs[d.Worker], at: d.At, down: d.Down})
	}
}

// nextDeath draws the next death of fixed worker wi, up from now.
func (s *sim) nextDeath(wi int32) {
	life := time.Duration(s.deathRng.ExpFloat64() / s.deathRate * float64(time.Hour))
	s.bookDeath(death{worker: wi, at: s.now + life, down: s.downtime, random: true})
}

func (s *sim) bookDeath(d death) {
	di := int32(len(s.deathBook))
	s.deathBook = append(s.deathBook, d)
	s.pushDeathEvent(event{at: d.at, kind: evDeath, idx: di})
}

// pushDeathEvent books an event of a death, counted apart so that a
// death can tell whether anything else is left to happen.
func (s *sim) pushDeathEvent(e event) {
	s.deathEvents++
	s.events.push(e)
}

// die stops fixed worker d.worker now. A death once every job is done
// is ignored: it could change nothing but the span billed. So is a death
// drawn from the rate when nothing but deaths is left to happen (no
// arrival, no other event: what is still queued can never run), which
// ends that worker's deaths; a run with work stuck for good would
// otherwise never end. It reports whether it acted.
func (s *sim) die(di int32) bool {
	d := s.deathBook[di]
	w := &s.workers[d.worker]
	if s.workLeft == 0 || w.state != wsUp {
		return false
	}
	if d.random && s.next >= len(s.tr.Jobs) && len(s.events.items) == s.deathEvents {
		return false
	}
	s.deathBook[di].died = true
	s.pools[w.pool].free -= int(w.slots - w.busy)
	w.state = wsDead
	for _, ti := range w.tasks {
		if t := &s.tasks[ti]; !t.halted {
			// Its finish, checkpoint and landing events are void: a
			// dead process does none of them.
			t.halted, t.haltAt = true, s.now
			t.gen++
			// A checkpoint due at this instant counts as written, as
			// the model's checkpoint arithmetic has it.
			s.refresh(ti)
		}
	}
	s.st.deaths++
	s.pushDeathEvent(event{at: s.now + s.ttl, kind: evDetect, idx: di})
	return true
}

// detect declares the dead worker dead: it leaves the policy's view and
// the capacity, and its jobs are requeued.
func (s *sim) detect(di int32) {
	d := s.deathBook[di]
	wi := d.worker
	w := &s.workers[wi]
	ts := slices.Clone(w.tasks)
	w.state = wsGone
	w.gen++
	s.unhold(w)
	s.ix.RemoveWorker(w.id)
	p := &s.pools[w.pool]
	p.workers = slices.DeleteFunc(p.workers, func(x int32) bool { return x == wi })
	last := s.live[len(s.live)-1]
	s.live[w.pos] = last
	s.workers[last].pos = w.pos
	s.live = s.live[:len(s.live)-1]
	w.pos = -1
	for _, ti := range ts {
		t := &s.tasks[ti]
		if t.state == tsFree || t.worker < 0 {
			continue // a gang already requeued through another member
		}
		if t.state == tsLeaving {
			// The policy was stopping it: it goes where the policy asked,
			// its loss counted at that stop.
			// Its winding down ended with the process.
			t.stopAt = s.now - max(t.haltAt-t.stopAt, 0)
			s.land(ti, t.dest)
			continue
		}
		t.recovered = true
		s.stop(ti, stopLost, s.requeueTo(t))
	}
	s.pushDeathEvent(event{at: max(d.at+d.down, s.now), kind: evRevive, idx: di})
	s.dirty = true
}

// revive registers the worker again with every slot free, and under a
// rate draws its next death.
func (s *sim) revive(di int32) {
	d := s.deathBook[di]
	wi := d.worker
	w := &s.workers[wi]
	w.state, w.busy, w.idleSince, w.gen = wsUp, 0, s.now, w.gen+1
	w.tasks, w.holds, w.rooms = w.tasks[:0], nil, w.rooms[:0]
	w.pos = int32(len(s.live))
	s.live = append(s.live, wi)
	p := &s.pools[w.pool]
	i, _ := slices.BinarySearch(p.workers, wi)
	p.workers = slices.Insert(p.workers, i, wi)
	p.free += int(w.slots)
	s.workerChanged(wi)
	s.dirty = true
	if d.random {
		s.nextDeath(wi)
	}
	s.fill(wi)
}

// requeueTo is the queue a dead worker's task goes back to: the one it was
// taken from, except that under team shares core work, which rule 9
// admitted from held, waits in held again (readmitted, first in line), as
// the live store sends it, rather than start past admission.
func (s *sim) requeueTo(t *task) queueKind {
	if t.core && s.teams != nil && t.queue == qCore {
		return qHeld
	}
	return t.queue
}
