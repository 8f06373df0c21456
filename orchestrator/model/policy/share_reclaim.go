package policy

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// reclaimForOwners is rule 1 under team shares (rule 9's reclaim for
// owners). Fixed workers take core work in queue order, so the free
// fixed slots and those that reclaims in flight are freeing go to the
// queued core jobs in that order; of the jobs they do not reach, those
// within their team's share (see attribute: the team's running work
// first, then its queued work in queue order) are an owner's work that
// waits, and exactly their slots are reclaimed, with those of any loan
// queued ahead of them, which takes a freed slot first. A queued loan
// with no owner's work behind it reclaims nothing: it was admitted into
// room that has gone.
//
// The victims are loans only, never work within any team's share: from
// the borrower with the most borrowed slots over weight first (then the
// most decayed usage, then name), recounted after each victim, and within
// it the loan that loses least (least work since its checkpoint, then the
// newest start, then ID). A loan whose reclaim would bring its team's use
// below its share (a sized job or a GPU share that fits only partly) is
// taken only when no whole loan of any team is left: see
// share_victims.go. A gang or sized job goes whole and frees all
// its slots. Each victim is charged to the owner whose waiting work is
// first in queue order, which is who the slots it frees go to.
//
// It may run more than once a tick (see settleShares): the slots this
// tick's reclaims free count as freeing, as those in flight do.
func (p *planner) reclaimForOwners() {
	ts := p.teams
	free := p.freeFixed
	p.short = p.coreQueued.slots() - free - p.reclaiming - p.freedSized - p.ownerFreed - p.rebalanceFreed
	if p.short <= 0 {
		return
	}
	needs, total := p.ownersWaiting(ts.attribute(p))
	if total <= 0 {
		return
	}
	teams, cands := p.loanCandidates()
	defer func() { p.owner = "" }()
	for k := 0; total > 0 && k < len(needs); {
		owner := needs[k].team
		x, i := p.nextVictim(teams, cands, owner)
		if x == "" {
			// No other team's loan is left: this owner's work waits for
			// slots to free by themselves.
			total -= needs[k].slots
			k++
			continue
		}
		v := cands[x][i]
		cands[x] = slices.Delete(cands[x], i, i+1)
		n := p.freedOnFixed(v)
		p.owner = owner
		p.reclaimOne(v, fmt.Sprintf("team %q waits for %d slots of its share (%d free, %d reclaims in flight); "+
			"team %q borrows %s slots, %.2f over its weight, the most; loses %s of work",
			owner, needs[k].slots, free, p.reclaiming, x, milliString(ts.borrowed(x)), ts.weighted(x, ts.borrowed(x)), p.lostWork(v)))
		p.short -= n
		p.ownerFreed += n
		total -= n
		for n > 0 && k < len(needs) {
			take := min(n, needs[k].slots)
			needs[k].slots -= take
			n -= take
			if needs[k].slots == 0 {
				k++
			}
		}
	}
}

// settleShares admits, within their shares, the held work of teams
// that this tick's reclaims, rebalancing or overflows brought below
// their share, and reclaims for it in turn, until nothing more is
// admitted: otherwise the next tick would, and a plan would not be its
// own fixed point. Every pass admits a held job or ends the loop.
func (p *planner) settleShares() {
	if p.teams == nil || len(p.ix.held) == 0 {
		return
	}
	for {
		n := len(p.actions)
		p.admitInShare()
		if len(p.actions) == n {
			return
		}
		p.reclaimForOwners()
	}
}

// ownerNeed is slots of one team's in-share work that no free slot
// reaches.
type ownerNeed struct {
	team  string
	slots int
}

// ownersWaiting walks the work bound for the core queue in queue order
// (see reclaimForOwners) and returns the in-share work the free and
// freeing slots do not reach, in that order, and its slots in all.
// inShare is what each team's running work uses of its share. Sized
// work unplaced is rule 1's for sized work (reclaimSized), not this.
func (p *planner) ownersWaiting(inShare map[string]int64) ([]ownerNeed, int) {
	ts := p.teams
	fill := maps.Clone(inShare)
	// Placed work holds its slots: it is in its team's use before any
	// queued work.
	var placed []*Job
	for r := range p.ix.placed {
		if q := r.destination(); q == QueueCore || q == QueueLoan {
			placed = append(placed, r.Job)
		}
	}
	slices.SortFunc(placed, byQueueOrder)
	for _, j := range placed {
		if m := j.milliSlots(); fill[j.Team]+m <= ts.share(j.Team) {
			fill[j.Team] += m
		}
	}
	var list []*Job
	for j := range merged(false, p.ix.queue(QueueCore, string(jobs.ClassCore))) {
		if !j.waitsPlaced() && !j.sized() && p.destination(j) == QueueCore {
			list = append(list, j)
		}
	}
	for r := range p.ix.redirected {
		if !(r.queued() && r.Queue == QueueCore) && !r.sized() && r.destination() == QueueCore && p.destination(r.Job) == QueueCore {
			list = append(list, r.Job)
		}
	}
	for _, j := range p.movedJobs {
		if j.Queue == QueueHeld && j.free() && !j.sized() && p.moved[j.ID] == QueueCore {
			list = append(list, j)
		}
	}
	slices.SortFunc(list, byQueueOrder)
	avail := p.freeFixed + p.reclaiming + p.freedSized + p.ownerFreed + p.rebalanceFreed
	var needs []ownerNeed
	total, ahead := 0, 0
	// Shares pack as the core count packs them: one takes a slot only
	// where it opens one beside those before it.
	var used slotCount
	for _, j := range list {
		w, m := used.with(j).slots()-used.slots(), j.milliSlots()
		used.add(j)
		in := fill[j.Team]+m <= ts.share(j.Team)
		if in {
			fill[j.Team] += m
		}
		if avail >= w {
			avail -= w
			continue
		}
		if !in {
			// A loan queued ahead takes the first slot that frees: the
			// owner's work behind it starts only once it has one too.
			ahead += w
			continue
		}
		if n := len(needs); n > 0 && needs[n-1].team == j.Team {
			needs[n-1].slots += ahead + w
		} else {
			needs = append(needs, ownerNeed{j.Team, ahead + w})
		}
		total += ahead + w
		ahead = 0
	}
	return needs, total
}

// nextVictim returns the team and index in cands of the next loan to
// reclaim for owner: the first loan, in victim order, of the team that
// borrows most (mostBorrowing) among those with a loan whose reclaim
// leaves the team at or above its share; if no team has one, the first
// loan of the team that borrows most. "" if no loan is left.
func (p *planner) nextVictim(teams []string, cands map[string][]*Job, owner string) (string, int) {
	first := map[string]int{}
	var whole []string
	for _, t := range teams {
		for i, v := range cands[t] {
			if !p.teams.partlyInShare(v, 0) {
				first[t] = i
				whole = append(whole, t)
				break
			}
		}
	}
	if x := p.mostBorrowing(whole, cands, owner); x != "" {
		return x, first[x]
	}
	return p.mostBorrowing(teams, cands, owner), 0
}

// mostBorrowing returns the team other than owner with loans left in
// cands that borrows most over its weight (then the most decayed usage,
// then the first name); "" if none.
func (p *planner) mostBorrowing(teams []string, cands map[string][]*Job, owner string) string {
	ts := p.teams
	best := ""
	for _, t := range teams {
		if t == owner || len(cands[t]) == 0 {
			continue
		}
		if best == "" || cmp.Or(
			cmp.Compare(ts.weighted(t, ts.borrowed(t)), ts.weighted(best, ts.borrowed(best))),
			cmp.Compare(p.ix.teamUsage[t], p.ix.teamUsage[best])) > 0 {
			best = t
		}
	}
	return best
}

// rebalance is rule 9's optional preemption between borrowers
// (Shares.Rebalance.Enabled, off by default). Held reclaimable work of a
// borrower Y that may not borrow only because the lendable room is taken
// may have one loan of borrower X stopped for it, when X borrows more
// than Y over their weights by more than the dead zone, and only if after
// the move Y still borrows no more than X over their weights: a move
// never makes the preemptor the one to preempt back, so moves cannot
// loop. The victim must have run MinRun (so a loan makes progress
// before it can be stopped) and been preempted by rebalancing fewer than
// MaxPerAttempt times. Borrowers are served in fair order, each in queue
// order, as admission serves them; the job is admitted at once into the
// slots the victim frees.
func (p *planner) rebalance() {
	ts := p.teams
	if ts == nil || !ts.cfg.Rebalance.Enabled || len(p.ix.held) == 0 {
		return
	}
	ts.attribute(p)
	teams, cursors := p.heldCursors()
	for len(teams) > 0 {
		ts.cfg.FairOrder(teams, ts.borrowedSlots(), p.ix.teamUsage)
		team := teams[0]
		j := p.nextLoan(cursors[team])
		if j == nil || !p.rebalanceFor(j) {
			teams = teams[1:]
			continue
		}
		cursors[team].advance()
	}
}

// rebalanceFor stops one loan of another borrower for held job j and
// admits j, if the conditions of rebalance allow; it reports whether it
// did.
func (p *planner) rebalanceFor(j *Job) bool {
	ts := p.teams
	r := ts.cfg.Rebalance
	y := j.Team
	after := ts.used[y] + j.milliSlots() - ts.share(y)
	if after <= 0 || after > ts.borrowLimit(y) {
		return false
	}
	now, yAfter := ts.weighted(y, ts.borrowed(y)), ts.weighted(y, after)
	var xs []string
	loans := map[string][]*Job{}
	for team, js := range ts.running {
		if team == y {
			continue
		}
		for _, v := range js {
			if ts.loan[v] && p.movable(v) && p.now.Sub(v.StartedAt) >= r.MinRun && v.Rebalanced < r.MaxPerAttempt {
				loans[team] = append(loans[team], v)
			}
		}
		if len(loans[team]) > 0 {
			slices.SortFunc(loans[team], p.victimOrder)
			xs = append(xs, team)
		}
	}
	slices.SortFunc(xs, func(a, b string) int {
		return cmp.Or(cmp.Compare(ts.weighted(b, ts.borrowed(b)), ts.weighted(a, ts.borrowed(a))),
			cmp.Compare(p.ix.teamUsage[b], p.ix.teamUsage[a]), cmp.Compare(a, b))
	})
	for _, x := range xs {
		xNow := ts.weighted(x, ts.borrowed(x))
		if xNow-now <= r.DeadZone {
			return false // the rest borrow no more than x
		}
		for _, v := range loans[x] {
			vm := v.milliSlots()
			if yAfter > ts.weighted(x, max(ts.used[x]-vm-ts.share(x), 0)) {
				continue // Y would end above X: X could preempt back
			}
			ts.used[x] -= vm
			ok, _ := p.mayTake(j, false)
			ts.used[x] += vm
			freed := p.freedOnFixed(v)
			if !ok || p.coreRoomAfter(j)+p.rebalanceFreed+freed < 0 {
				continue
			}
			p.owner = y
			p.reclaimJob(v, fmt.Sprintf("rebalance: team %q borrows %.2f over its weight, team %q %.2f "+
				"(dead zone %.2f); after the move %.2f and %.2f; loses %s of work",
				x, xNow, y, now, r.DeadZone, ts.weighted(x, max(ts.used[x]-vm-ts.share(x), 0)), yAfter, p.lostWork(v)), true)
			p.owner = ""
			p.rebalanceFreed += freed
			p.admitOne(j, "", fmt.Sprintf("team %q borrows the slots rebalancing frees from team %q", y, x))
			return true
		}
	}
	return false
}

// loanCandidates lists, per borrowing team (teams by name), its running
// loans that may be moved, in victim order: what the reclaims for owners
// and for lend limits choose from.
func (p *planner) loanCandidates() ([]string, map[string][]*Job) {
	ts := p.teams
	cands := map[string][]*Job{}
	for team, js := range ts.running {
		for _, j := range js {
			if ts.loan[j] && p.movable(j) {
				cands[team] = append(cands[team], j)
			}
		}
		slices.SortFunc(cands[team], p.victimOrder)
	}
	return slices.Sorted(maps.Keys(cands)), cands
}
