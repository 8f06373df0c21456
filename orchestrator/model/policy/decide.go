package policy

import (
	"cmp"
	"fmt"
	"math"
	"time"
)

// Decide returns what to do this tick, given the state in s and the time
// now. It is pure and deterministic; see the package documentation.
//
// Decide never fails. A snapshot that does not pass Validate still gets a
// plan that refers only to known jobs, workers and pools and never commits
// more fixed slots than are free, but it may not be the plan you meant:
// validate the config when it is loaded and the snapshot in tests.
func Decide(s Snapshot, now time.Time) Plan { return IndexOf(s).Decide(now) }

// decide runs the rules over v.
func decide(v *view) Plan {
	p := newPlanner(v)
	p.unplace()              // rule 8: placements whose workers take no placed work
	p.admit()                // rule 9: held core work within its share to core
	p.reclaimSized()         // rule 1 for sized core work
	p.placeSized(sizedCore)  // rule 8: see placeSized for why here
	p.reclaim()              // rule 1 (under shares, rule 9's reclaim for owners)
	p.overflow()             // rule 7
	p.settleShares()         // rule 9: room the moves so far made in shares
	p.unlend()               // rule 2
	p.lendShares()           // rule 9: loans and rebalancing, with what they move
	p.settleRegime()         // after the moves that change the fixed load
	p.placeSized(sizedBurst) // rule 8
	p.lend()                 // rules 2 and 4
	p.migrate()              // rule 4
	p.lendShares()           // rule 9: the lend limits, once every move onto the quota is planned
	p.overflowHeld()         // rule 7 for held work (rule 9): see overflowHeld for why here
	p.rehome()               // rule 3: queued elastic work into the elastic queue it belongs in
	p.place()                // rule 3: where the queued burst work will run
	p.scaleUp()              // rule 3
	p.drain()                // rule 4, before release so release sees what drained workers no longer need
	p.repack()               // rule 5: empty a worker whose work fits on the others, after rule 4's drains
	p.release()              // rule 5
	p.keepScratch()
	return Plan{Actions: p.actions}
}

// regime is where committed fixed utilization stands against the watermarks.
type regime int

const (
	cool regime = iota // below Low: move work back, drain (rule 4)
	hold               // between the watermarks: no migration, no drain (rule 6)
	hot                // at or above High: nothing more fits under High
)

// planner accumulates one tick's actions and keeps the counts the later
// rules depend on up to date as earlier rules move jobs.
type planner struct {
	*view
	actions []Action
	// moved maps each job moved this tick to the queue it is going to;
	// movedJobs lists them in the order they were moved.
	moved     map[string]Queue
	movedJobs []*Job
	// coreQueued and loans are FixedLoad's counts after this tick's
	// moves.
	coreQueued, loans slotCount
	// lent counts the lends and migrations to loan of this tick,
	// lentCore its migrations of core work: each packs its shares with
	// those of the queue it goes to.
	lent, lentCore slotCount
	// short is how many queued core slots still cannot start after rule 1;
	// freedSized the slots rule 1 frees for sized core work.
	short, freedSized int
	regime            regime
	// tick is, per worker, what this tick's placements take on it and
	// what its reclaims free; placing lists the jobs placed (rule 8).
	tick    map[*workerRec]*slotUse
	placing map[string]bool
	placer  *placer
	// teams is rule 9's state, nil when shares are off; owner is the
	// team a sized reclaim is being made for.
	teams *teamState
	owner string
	// rebalanceFreed is the fixed slots this tick's rebalancing reclaims
	// will free, which the loans they make room for may count on;
	// ownerFreed those of its reclaims for owners.
	rebalanceFreed, ownerFreed int
}

// tickUse returns this tick's use of w, made if need be.
func (p *planner) tickUse(w *workerRec) *slotUse {
	u := p.tick[w]
	if u == nil {
		u = &slotUse{}
		p.tick[w] = u
	}
	return u
}

// idle reports whether nothing runs on w, is held there, or was placed
// there this tick.
func (p *planner) idle(w *workerRec) bool {
	u := p.tick[w]
	return p.empty(w) && (u == nil || u.used == 0)
}

// freeSlots is how many slots w has free now, after this tick's
// placements; negative once a reservation over-commits it.
func (p *planner) freeSlots(w *workerRec) int { return max(w.Slots, 0) - p.rawBusy(w, p.tickSlots(w)) }

// tickSlots is the slots placed on w this tick.
func (p *planner) tickSlots(w *workerRec) int {
	if u := p.tick[w]; u != nil {
		return u.used
	}
	return 0
}

func newPlanner(v *view) *planner {
	p := &planner{view: v, moved: v.scr.moved, movedJobs: v.scr.movedJobs, coreQueued: v.ix.coreCount(), loans: v.ix.loanCount(),
		tick: v.scr.tick, placing: v.scr.placing}
	p.teams = p.teamsOf()
	p.settleRegime()
	return p
}

// settleRegime places the fixed load, after this tick's overflows,
// placements and unlends, against the watermarks. Rules 4 and 6 read it
// then rather than from the snapshot: a core job sent to overflow this
// tick no longer holds the quota busy, and judging the quota by the
// snapshot would leave the drain it allows to the next tick's plan, so
// a plan would not be a fixed point of its own outcome.
func (p *planner) settleRegime() {
	l := p.fixed
	l.QueuedCore, l.Loans = p.coreQueued.slots(), p.loans.slots()
	switch u := l.Committed(); {
	case u < p.cfg.Low:
		p.regime = cool
	case u < p.cfg.High:
		p.regime = hold
	default:
		p.regime = hot
	}
}

// add appends an action and, for a move of j, records where it goes.
func (p *planner) add(a Action, j *Job) {
	p.shareMove(a, j)
	if a.moves() {
		p.moved[a.Job] = a.Queue
		p.movedJobs = append(p.movedJobs, j)
	}
	p.actions = append(p.actions, a)
}

// destination is where a job is going, counting this tick's moves.
func (p *planner) destination(j *Job) Queue {
	if q, ok := p.moved[j.ID]; ok {
		return q
	}
	return j.destination()
}

// movable reports whether a move may be planned for j this tick: none is
// in flight or planned, and it is not placed (waiting for its workers).
func (p *planner) movable(j *Job) bool {
	_, done := p.moved[j.ID]
	return j.free() && !done && !j.waitsPlaced()
}

// coreWaits reports whether queued core work exceeds the free fixed slots.
// Fixed workers take core before loan, so a queued core job that fits is
// not waiting; one that does not fit is, and nothing may be lent meanwhile.
func (p *planner) coreWaits() bool { return p.coreQueued.slots() > p.freeFixed }

// ceiling is how many fixed slots may be committed under the high
// watermark, never more than exist. Integer arithmetic keeps 0.7*10 from
// landing on 6.999 and losing a slot.
func (p *planner) ceiling() int {
	c := int(math.Floor(p.cfg.High*float64(p.fixed.Slots) + 1e-9))
	return min(max(c, 0), p.fixed.Slots)
}

// committed is how many fixed slots are running or spoken for.
func (p *planner) committed() int {
	return p.fixed.Busy + p.coreQueued.plus(p.lentCore).slots() + p.loans.plus(p.lent).slots()
}

// ratio formats n fixed slots as a utilization.
func (p *planner) ratio(n int) string {
	if p.fixed.Slots <= 0 {
		return "n/a (no fixed slots)"
	}
	return fmt.Sprintf("%.2f", float64(n)/float64(p.fixed.Slots))
}

// byQueueOrder orders queued jobs the way their queue serves them:
// readmitted jobs first, by when they were first admitted, then the rest
// by when they were queued. It is the hot comparison of a large snapshot,
// so it stops at the first difference instead of using cmp.Or, which
// evaluates every key.
func byQueueOrder(a, b *Job) int {
	if a.Readmitted != b.Readmitted {
		if a.Readmitted {
			return -1
		}
		return 1
	}
	if !a.Readmitted {
		if c := a.QueuedAt.Compare(b.QueuedAt); c != 0 {
			return c
		}
	}
	if c := a.SubmittedAt.Compare(b.SubmittedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}
