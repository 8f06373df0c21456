package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// epoch stands in for a zero trace start: the policy reads a zero time as
// "unknown" (an unknown billing start pays nothing, an unknown idle start
// is never released), so offset 0 must not map to it.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Limits of a run that only a policy or model bug can reach.
const (
	// maxQuietWakes is how many timer wake-ups may plan nothing once every
	// job is done before the run stops waiting for idle workers to be
	// released (they are then billed to the end of the run): a worker whose
	// release window no tick falls in is kept forever, live and here.
	maxQuietWakes = 1000
	// maxBusyTicks is how many ticks in a row may act with no job, worker
	// or timer event in between before the run is declared stuck: a
	// policy that keeps acting on an unchanging world is flapping.
	maxBusyTicks = 100_000
)

// Run simulates tr under o and returns what it measured. It returns an
// error for an invalid trace or options, and if a plan asks for something
// the model cannot do (a policy or model bug). The same trace and options
// always give the same Result.
func Run(tr trace.Trace, o Options) (Result, error) {
	s, err := newSim(tr, o)
	if err != nil {
		return Result{}, err
	}
	if err := s.run(); err != nil {
		return Result{}, err
	}
	return s.result(), nil
}

// sim is the model: the trace cursor, the event queue, the job queues, the
// workers and the policy's view of them, all in virtual time (an offset
// from the trace start). Tasks, workers and launches refer to each other by
// index, which keeps the model free of pointers for the collector to chase.
type sim struct {
	setup
	tr   trace.Trace
	base time.Time
	now  time.Duration
	next int // next trace job to arrive

	tasks     []task
	freeTasks []int32
	workers   []worker
	live      []int32 // workers not gone, in snapshot order
	fixed     int32   // the first fixed worker, -1 without quota
	fixedWs   []int32 // the fixed workers of every quota, in ID order
	launches  []launch
	booting   []int32 // launches not yet booted

	events                            eventQueue
	core, loan, burstSpot, burstOther taskQueue
	// held is the core work waiting for rule 9 under team shares.
	held taskQueue
	// teams is the model's record of team shares; nil with shares off.
	teams *teamModel
	valid func(queueEntry) bool

	pools      []poolState
	poolPolicy []policy.Pool
	poolByName map[string]int32
	byPrice    []int32 // elastic pools, cheapest first

	// ix is the policy's view of the model (see snapshot.go). idle lists
	// the idle elastic workers that are up, whose release timers wake the
	// run; coreDue holds the queued core tasks by when rule 7 may move
	// them; ls is the launch book's storage, reused from tick to tick.
	ix      *policy.Index
	idle    []int32
	coreDue dueQueue
	ls      []policy.Launch

	// applying is set while a plan is carried out; tasks it moves wait in
	// unplaced until the whole plan is applied (see place).
	applying bool
	unplaced []int32
	// refill are workers freed of a gang's hold while applying, which
	// take work once the plan is applied.
	refill []int32
	// youngHolds are the placements made, oldest first, until they are
	// old enough for rule 8 to move (see prepareTick).
	youngHolds []heldEntry

	// dirty: the model changed since the last snapshot. wake: the first
	// tick at which a timer can change the plan of an unchanged model.
	dirty     bool
	wake      time.Duration
	lastTick  time.Duration
	end       time.Duration
	quiet     int  // timer wake-ups that planned nothing once all work is done
	busyTicks int  // acting ticks in a row without an event
	eventSeen bool // an event happened since the last tick
	done      bool // the run gave up waiting for idle workers
	settled   bool // workers still up have been billed to the end

	workLeft     int     // tasks not finished, arrivals included
	jobLeft      []int32 // per trace job: slots not finished
	jobUnstarted []int32 // per trace job: slots never started

	rng *rand.Rand
	// deathBook lists the deaths of fixed workers booked so far, which
	// the death events name; deathRng draws them under a rate.
	deathBook   []death
	deathRng    *rand.Rand
	deathEvents int // events of deaths in the event queue
	st          stats
	bound       *waitBound // nil unless Options.StopOverP95 is set

	// Test knobs: decide on every tick instead of only when something
	// changed, and show every non-terminal task to Decide. Results must
	// not depend on either.
	alwaysDecide bool
	fullSnapshot bool
	// check, if set, vets every snapshot before Decide sees it.
	check func(*sim, policy.Snapshot) error
	// onAction, if set, sees every action of a plan before it is carried
	// out.
	onAction func(*sim, policy.Action)
}

// launch is one scale-up: Count workers asked for at requested.
type launch struct {
	pool      int32
	count     int
	requested time.Duration
}

func newSim(tr trace.Trace, o Options) (*sim, error) {
	su, err := prepare(o)
	if err != nil {
		return nil, err
	}
	if err := tr.Validate(); err != nil {
		return nil, fmt.Errorf("sim: trace %q: %w", tr.Name, err)
	}
	s := &sim{
		setup:        su,
		tr:           tr,
		base:         tr.Start,
		fixed:        -1,
		poolByName:   map[string]int32{},
		wake:         never,
		lastTick:     -1,
		jobLeft:      make([]int32, len(tr.Jobs)),
		jobUnstarted: make([]int32, len(tr.Jobs)),
		rng:          rand.New(rand.NewPCG(su.seed, su.seed^0x9e3779b97f4a7c15)),
	}
	if s.base.IsZero() {
		s.base = epoch
	}
	s.valid = s.validEntry
	s.st.init()
	s.bound = newWaitBound(s)
	for _, j := range tr.Jobs {
		s.workLeft += tasksOf(&j)
	}
	s.poolPolicy = su.pools
	s.ix = policy.NewIndex(su.cfg, su.pools)
	s.pools = make([]poolState, len(su.pools))
	for i, p := range su.pools {
		s.pools[i] = poolState{Pool: p, elastic: p.Kind.Elastic()}
		s.poolByName[p.Name] = int32(i)
		if p.Kind.Elastic() {
			s.byPrice = append(s.byPrice, int32(i))
		}
	}
	// The order in which a queued burst task looks for a free slot: the
	// cheapest pool first, as the policy places work.
	slices.SortStableFunc(s.byPrice, func(a, b int32) int { return policy.ComparePools(&s.pools[a].Pool, &s.pools[b].Pool) })
	s.startQuotas()
	s.startDeaths()
	s.teams = newTeamModel(su.cfg)
	return s, nil
}

// at converts a virtual time to the wall clock the policy reads.
func (s *sim) at(d time.Duration) time.Time { return s.base.Add(d) }

// run is the event loop. Arrivals (from the sorted trace) and heap events
// are handled in time order, each followed at once by dispatch, since live
// workers take queued work within milliseconds. Decide runs only on tick
// boundaries, and only on the ones where the model changed since the last
// snapshot or a timer comes due (see tick). Events at a tick's instant come
// before the tick.
func (s *sim) run() error {
	for {
		te := s.events.next()
		if s.next < len(s.tr.Jobs) {
			te = min(te, s.tr.Jobs[s.next].Submit)
		}
		tt := s.wake
		if s.dirty || (s.alwaysDecide && (te != never || s.wake != never)) {
			tt = min(tt, s.nextTick())
		}
		if s.done || (te == never && tt == never) {
			return nil
		}
		if te <= tt {
			s.now = te
			s.step()
			continue
		}
		s.now = tt
		if err := s.tick(); err != nil {
			return err
		}
	}
}

// step handles the next event or arrival at s.now. Heap events go first at
// equal times, so a slot freed at the instant a job arrives is free for it.
func (s *sim) step() {
	if s.events.next() == s.now {
		e := s.events.pop()
		if s.handle(e) {
			s.changed()
		}
		return
	}
	s.arrive()
	s.changed()
}

// changed records that an event changed the model at s.now.
func (s *sim) changed() {
	s.dirty = true
	s.eventSeen = true
	s.end = max(s.end, s.now)
}

// handle carries out a heap event and reports whether it was still current.
func (s *sim) handle(e event) bool {
	switch e.kind {
	case evFinish:
		if t := &s.tasks[e.idx]; t.gen == e.gen && t.state == tsRunning {
			s.finish(e.idx)
			return true
		}
	case evLand:
		if t := &s.tasks[e.idx]; t.gen == e.gen && t.state == tsLeaving {
			s.land(e.idx, t.dest)
			return true
		}
	case evBoot:
		s.boot(e.idx)
		return true
	case evCheckpoint:
		// A checkpoint changes what a stop would lose, which the policy
		// only reads once something else makes it stop a job: no tick is
		// due for it.
		if t := &s.tasks[e.idx]; t.gen == e.gen && t.state == tsRunning {
			s.refresh(e.idx)
			s.nextCheckpoint(e.idx)
		}
	case evDeath:
		s.deathEvents--
		return s.die(e.idx)
	case evDetect:
		s.deathEvents--
		s.detect(e.idx)
		return true
	case evRevive:
		s.deathEvents--
		s.revive(e.idx)
		// Back after every job is done, it changes nothing to bill.
		return s.workLeft > 0
	case evSpotReclaim:
		if w := &s.workers[e.idx]; w.gen == e.gen && w.state != wsGone {
			s.spotReclaim(e.idx)
			return true
		}
	}
	return false
}

// tasksOf is how many tasks a trace job runs as: one. A gang (Replicas
// n > 1) is one task of n members of the job's slots, placed, started,
// stopped and ended as a unit, as the live controller runs it.
func tasksOf(*trace.Job) int { return 1 }

// arrive submits the next trace job, queued by its class: a one-slot job
// is placed on a free slot if one may take it; a job of k slots is one
// sized task that waits for the policy to place it (rule 8) on one
// worker with k slots.
func (s *sim) arrive() {
	ji := int32(s.next)
	j := &s.tr.Jobs[s.next]
	s.next++
	tmpl := s.st.template(j.Template)
	s.jobLeft[ji] = int32(tasksOf(j))
	s.jobUnstarted[ji] = int32(tasksOf(j))
	q := qBurst
	switch {
	case j.Class == jobs.ClassCore && s.teams != nil:
		// Under team shares core work waits for rule 9 to admit it.
		q = qHeld
	case j.Class == jobs.ClassCore:
		q = qCore
	case s.teams != nil:
		// Under team shares burst work reaches fixed slots only through
		// rule 2's lend, which applies the team's share and limits.
	case len(s.byPrice) == 0:
		// As the live router does when no elastic capacity is managed:
		// burst work goes straight to loan, or it would wait a tick for
		// the policy to lend it.
		q = qLoan
	}
	for range tasksOf(j) {
		ti := s.newTask(ji, tmpl, j)
		if s.teams != nil {
			s.teams.arrived(s, ti)
		}
		s.enqueue(ti, q, s.now)
		s.place(ti)
	}
}

// tick runs the controller at s.now: snapshot, Decide, carry out the plan.
//
// Skipping the other ticks is exact, not an approximation: Decide is a pure
// function of the snapshot and the time, and with the snapshot unchanged
// the time can only change the plan where a timer crosses its threshold
// (an idle worker's TTL and paid time, a launch left unfilled past
// SpotFallbackAfter, a core job queued past CoreMaxWait); the snapshot
// records those crossings in wake. Running checkpoints also move with time,
// but the policy only uses them to order victims of a move that something
// else must trigger.
func (s *sim) tick() error {
	if s.bound.check(s) {
		s.done = true
		return nil
	}
	woken := !s.dirty && s.now >= s.wake
	s.lastTick = s.now
	s.wake = never
	s.prepareTick()
	if s.teams != nil {
		s.teams.tick(s)
	}
	if s.check != nil {
		if err := s.check(s, s.snapshot()); err != nil {
			return fmt.Errorf("sim: at %v: %w", s.now, err)
		}
	}
	plan := s.ix.Decide(s.at(s.now))
	s.st.decisions++
	s.dirty = false
	eventSeen := s.eventSeen
	s.eventSeen = false
	if plan.Empty() {
		// Once all work is done only timers wake the run, to release idle
		// workers; if they keep finding nothing to do, stop waiting.
		if s.workLeft == 0 && woken {
			if s.quiet++; s.quiet >= maxQuietWakes {
				s.done = true
			}
		}
		return nil
	}
	s.quiet = 0
	if eventSeen {
		s.busyTicks = 0
	} else if s.busyTicks++; s.busyTicks > maxBusyTicks {
		return fmt.Errorf("sim: at %v the policy acted on %d ticks in a row with nothing else happening; last plan: %s",
			s.now, s.busyTicks, plan)
	}
	s.end = max(s.end, s.now)
	s.dirty = true
	s.applying = true
	for _, a := range plan.Actions {
		s.st.actions[a.Kind]++
		if s.onAction != nil {
			s.onAction(s, a)
		}
		if err := s.carryOut(a); err != nil {
			return fmt.Errorf("sim: at %v cannot carry out %s: %w", s.now, a, err)
		}
	}
	s.applying = false
	for _, ti := range s.unplaced {
		if s.tasks[ti].state == tsQueued {
			s.place(ti)
		}
	}
	s.unplaced = s.unplaced[:0]
	s.doRefill()
	return nil
}
