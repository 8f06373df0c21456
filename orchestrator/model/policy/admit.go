package policy

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// admit is rule 9's admission, under team shares: core jobs wait in
// QueueHeld, which no worker reads, and this moves them to core (Action
// Admit) when they may take fixed slots. First, before any other rule,
// every team's work within its share, in queue order, whether or not a
// slot is free: the owner always wins, and rule 1 (as rule 9 has it)
// reclaims loans for it. Loans come last (see lendShares).
//
// With shares off no job should be held; any that is (shares were just
// turned off) is admitted, so nothing waits where no rule looks.
func (p *planner) admit() {
	if len(p.ix.held) == 0 {
		return
	}
	if p.teams == nil {
		for j := range merged(false, p.ix.queues(QueueHeld)...) {
			if isCore(j) && p.movable(j) {
				p.admitOne(j, "", "shares are off: nothing holds core work")
			}
		}
		return
	}
	p.admitInShare()
}

// lendShares is the rest of rule 9's admission: loans, one job at a time
// in fair order (shares.Config.FairOrder: least borrowed over weight
// first, then least decayed usage, then name), recounting after each,
// while the lendable room covers them (see mayTake) and a fixed slot no
// queued core work needs is free for them now: a loan never waits for a
// reclaim. Within a team loans go in queue order, and a loan that does
// not fit keeps the team's later ones waiting, so a big job is not passed
// for ever by small ones. Then the optional rebalancing.
//
// It comes after rules 1, 7 and 2 have moved what they move, since each
// changes who uses what, and runs with them to a fixed point: a loan
// queued for core makes rule 2 unlend burst work, which leaves room for
// another loan, and a rebalancing victim may bring its team below its
// share. Every pass moves a job or ends the loop, so it ends; and the
// next tick finds nothing this one left to do.
//
// Each pass first reclaims loans the lend limits no longer cover (see
// keepLendLimits): those reclaims change who borrows what as well. It
// runs again once rules 2 and 4 have lent and migrated, as those may
// take the last lendable slots within a share.
func (p *planner) lendShares() {
	if p.teams == nil {
		return
	}
	for {
		n := len(p.actions)
		p.keepLendLimits()
		if len(p.ix.held) > 0 {
			p.admitLoans()
			p.rebalance()
			p.settleShares()
			p.unlend()
		}
		if len(p.actions) == n {
			return
		}
	}
}

// admitInShare admits every team's held work that fits in its share.
// A team's burst work lent to the loan queue and not started yet gives
// way to its held core work (core owns fixed quota first, as in rule 2):
// it does not count against the room, and whatever of it then passes the
// share and may not stay as a loan goes back to burst (see
// unlendForOwners). Counting it would leave the core work to be admitted
// only once rule 2 unlends the burst work for other core work, a tick
// later: a plan that is not its own fixed point.
func (p *planner) admitInShare() {
	ts := p.teams
	lentQueued := map[string]int64{}
	for j := range merged(false, p.ix.queues(QueueLoan)...) {
		if p.ix.held[j.Team] != nil && p.movable(j) && p.destination(j) == QueueLoan {
			lentQueued[j.Team] += j.milliSlots()
		}
	}
	var in []*Job
	for _, team := range slices.Sorted(maps.Keys(p.ix.held)) {
		room := ts.share(team) - ts.used[team] + lentQueued[team]
		for j := range p.ix.held[team].all() {
			if room <= 0 {
				break
			}
			if m := j.milliSlots(); isCore(j) && p.movable(j) && j.due(p.now) && m <= room && p.fixedMayRun(j) {
				room -= m
				in = append(in, j)
			}
		}
	}
	slices.SortFunc(in, byQueueOrder)
	if len(lentQueued) > 0 && len(in) > 0 {
		p.unlendForOwners(in)
	}
	for _, j := range in {
		p.admitOne(j, j.Team, fmt.Sprintf("team %q uses %s of its %d-slot share; this job fits in it",
			j.Team, milliString(p.teams.used[j.Team]), p.teams.share(j.Team)/1000))
	}
}

// unlendForOwners sends back to burst, newest first, the queued loans of
// teams that the admission of their held core work in puts above their
// share, as far as they pass it and may not stay as loans (see mayTake).
// The unlends come first in the plan: they make the room.
func (p *planner) unlendForOwners(in []*Job) {
	ts := p.teams
	// Count the admissions, as they will be, while choosing.
	for _, j := range in {
		ts.used[j.Team] += j.milliSlots()
	}
	var out []*Job
	for j := range merged(true, p.ix.queues(QueueLoan)...) {
		if ts.used[j.Team] <= ts.share(j.Team) || !p.movable(j) || p.destination(j) != QueueLoan || j.waitsPlaced() {
			continue
		}
		if ok, _ := p.mayTake(j, true); ok {
			continue
		}
		ts.used[j.Team] -= j.milliSlots()
		out = append(out, j)
	}
	for _, j := range in {
		ts.used[j.Team] -= j.milliSlots()
	}
	for _, j := range out {
		ts.used[j.Team] += j.milliSlots() // add takes it off again
		p.loans.sub(j)
		p.add(Action{Kind: Unlend, Job: j.ID, Queue: QueueBurst, Team: j.Team, Owner: j.Team, Rule: 9,
			Reason: fmt.Sprintf("team %q's held core work takes its %d-slot share; this loan may not borrow", j.Team, ts.share(j.Team)/1000)}, j)
	}
}

// admitLoans admits held reclaimable work above its team's share, in
// fair order (see admit).
func (p *planner) admitLoans() {
	ts := p.teams
	teams, cursors := p.heldCursors()
	for len(teams) > 0 {
		ts.cfg.FairOrder(teams, ts.borrowedSlots(), p.ix.teamUsage)
		team := teams[0]
		j := p.nextLoan(cursors[team])
		if j == nil {
			teams = teams[1:]
			continue
		}
		ok, _ := p.mayTake(j, false)
		if !ok || p.coreRoomAfter(j) < 0 {
			teams = teams[1:]
			continue
		}
		cursors[team].advance()
		p.admitOne(j, "", fmt.Sprintf("team %q borrows: %s used of a %d-slot share, %.2f slots of lendable room left before this job",
			team, milliString(ts.used[team]), ts.share(team)/1000, ts.slack(team, 0)))
	}
}

// coreRoomAfter is how many fixed slots are free for work admitted to
// core once j is admitted too: free slots no queued core work takes
// (j among it), nor this tick's lends and migrations. A share may fit
// beside the shares already queued and take no slot. Loans already
// waiting in the loan queue do not count, as fixed workers take core
// work first (rule 2 unlends what no longer fits).
func (p *planner) coreRoomAfter(j *Job) int {
	core := p.coreQueued.plus(p.lentCore).with(j)
	return p.freeFixed - core.slots() - p.lent.slots()
}

// nextLoan moves c to the next held job that may borrow at all
// (reclaimable, not moved yet, runnable on fixed workers) and returns
// it; nil at the end.
func (p *planner) nextLoan(c *cursor) *Job {
	for j := c.head(); j != nil; j = c.head() {
		if isCore(j) && p.movable(j) && j.due(p.now) && p.reclaimable(j) && p.fixedMayRun(j) {
			return j
		}
		c.advance()
	}
	return nil
}

// fixedMayRun reports whether fixed workers could ever run j: always for
// one-slot work, which takes any slot.
func (p *planner) fixedMayRun(j *Job) bool { return !j.sized() || p.fixedCanRun(j) }

// admitOne plans the admission of held job j to core; owner is the team
// whose share it runs in, "" for a loan.
func (p *planner) admitOne(j *Job, owner, reason string) {
	p.coreQueued.add(j)
	p.add(Action{Kind: Admit, Job: j.ID, Queue: QueueCore, Team: j.Team, Owner: owner, Rule: 9, Reason: reason}, j)
}

// milliString formats thousandths of slots as slots.
func milliString(m int64) string {
	if m%1000 == 0 {
		return fmt.Sprintf("%d", m/1000)
	}
	return fmt.Sprintf("%.3f", float64(m)/1000)
}

// isCore reports whether j is core work.
func isCore(j *Job) bool { return j.Class == jobs.ClassCore }

// heldCursors lists the teams with held work, by name, and a cursor over
// each team's held jobs in queue order: where admission and rebalancing
// walk the held work in fair order.
func (p *planner) heldCursors() ([]string, map[string]*cursor) {
	cursors := map[string]*cursor{}
	teams := slices.Sorted(maps.Keys(p.ix.held))
	for _, team := range teams {
		c := newCursor(p.ix.held[team].chunks, false)
		cursors[team] = &c
	}
	return teams, cursors
}
