package policy

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ballastdev/ballast/jobs"
)

// admit is rule 9's admission, under team shares: core jobs wait in
// QueueHeld, which no worker reads, and this moves them to core (Action
// Admit) when they may take fixed slots. First every team's work within
// its share, in queue order, whether or not a slot is free: the owner
// always wins, and rule 1 (as rule 9 has it) reclaims loans for it. Then
// loans, one job at a time in fair order (shares.Config.FairOrder: least
// borrowed over weight first, then least decayed usage, then name),
// recounting after each, while the lendable room covers them (see
// mayTake) and a fixed slot is free for them now: a loan never waits for
// a reclaim. Within a team loans go in queue order, and a loan that does
// not fit keeps the team's later ones waiting, so a big job is not passed
// for ever by small ones.
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
	p.admitLoans()
}

// admitInShare admits every team's held work that fits in its share.
func (p *planner) admitInShare() {
	ts := p.teams
	var in []*Job
	for _, team := range slices.Sorted(maps.Keys(p.ix.held)) {
		room := ts.share(team) - ts.used[team]
		for j := range p.ix.held[team].all() {
			if room <= 0 {
				break
			}
			if m := j.milliSlots(); isCore(j) && p.movable(j) && m <= room && p.fixedMayRun(j) {
				room -= m
				in = append(in, j)
			}
		}
	}
	slices.SortFunc(in, byQueueOrder)
	for _, j := range in {
		p.admitOne(j, j.Team, fmt.Sprintf("team %q uses %s of its %d-slot share; this job fits in it",
			j.Team, milliString(p.teams.used[j.Team]), p.teams.share(j.Team)/1000))
	}
}

// admitLoans admits held reclaimable work above its team's share, in
// fair order (see admit).
func (p *planner) admitLoans() {
	ts := p.teams
	cursors := map[string]*cursor{}
	var teams []string
	for _, team := range slices.Sorted(maps.Keys(p.ix.held)) {
		c := newCursor(p.ix.held[team].chunks, false)
		cursors[team] = &c
		teams = append(teams, team)
	}
	for len(teams) > 0 {
		ts.cfg.FairOrder(teams, ts.borrowedSlots(), p.ix.teamUsage)
		team := teams[0]
		j := p.nextLoan(cursors[team])
		if j == nil {
			teams = teams[1:]
			continue
		}
		ok, _ := p.mayTake(j, false)
		if !ok || p.fixed.Slots-p.committed() < j.weight() {
			teams = teams[1:]
			continue
		}
		cursors[team].advance()
		p.admitOne(j, "", fmt.Sprintf("team %q borrows: %s used of a %d-slot share, %.2f slots of lendable room left before this job",
			team, milliString(ts.used[team]), ts.share(team)/1000, ts.slack(team, 0)))
	}
}

// nextLoan moves c to the next held job that may borrow at all
// (reclaimable, not moved yet, runnable on fixed workers) and returns
// it; nil at the end.
func (p *planner) nextLoan(c *cursor) *Job {
	for j := c.head(); j != nil; j = c.head() {
		if isCore(j) && p.movable(j) && p.reclaimable(j) && p.fixedMayRun(j) {
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
	p.coreQueued += j.weight()
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
