package policy

import (
	"fmt"
	"slices"
)

// keepLendLimits is the part of rule 9 that keeps the lend limits
// once loans are running. Admission lends only while the lendable room
// (free common slots, each lender's idle share up to its lend limit)
// covers every loan, but a team's in-share work may start on a free slot
// that is some team's idle share past its lend limit, which it may take
// (the owner always wins). The borrowers then hold more than may be lent,
// and nobody waits to trigger a reclaim for an owner: the team that lends
// less than its share would find its unlent slots taken when its own work
// comes. So loans are reclaimed until the room covers them again, chosen
// as for an owner (whole loans before those partly within their team's
// share, the most borrowing team over its weight first, then the loan
// that loses least), each charged to the lender whose limit is most
// passed. It runs once every move onto the quota of the tick is planned
// (admission, lends, migrations), so a limit passed by one of them is
// dealt with in the same tick.
func (p *planner) keepLendLimits() {
	ts := p.teams
	if ts == nil || ts.slack("", 0) >= -slackEps {
		return
	}
	ts.attribute(p)
	teams, cands := p.loanCandidates()
	defer func() { p.owner = "" }()
	for {
		slack := ts.slack("", 0)
		if slack >= -slackEps {
			return
		}
		x, i := p.nextVictim(teams, cands, "")
		if x == "" {
			return
		}
		v := cands[x][i]
		cands[x] = slices.Delete(cands[x], i, i+1)
		p.owner = ts.mostPastLimit()
		p.reclaimOne(v, fmt.Sprintf("loans hold %.2f slots more than the common slots and the lend limits allow; "+
			"team %q borrows %s slots, %.2f over its weight, the most; loses %s of work",
			-slack, x, milliString(ts.borrowed(x)), ts.weighted(x, ts.borrowed(x)), p.lostWork(v)))
	}
}

// mostPastLimit is the team whose idle share past its lend limit the
// loans use most (shares.Config.Split), the first in the shares' order
// of equals; "" if none.
func (ts *teamState) mostPastLimit() string {
	used := make(map[string]float64, len(ts.used))
	for t, m := range ts.used {
		used[t] = float64(m) / 1000
	}
	sp := ts.cfg.Split(ts.quota, used)
	best, most := "", 0.0
	for _, t := range ts.cfg.Teams {
		idle := float64(t.Slots) - sp.Own[t.Name]
		past := idle - sp.Idle[t.Name] - min(idle, float64(t.LendLimit))
		// Teams are in config order; the first of equals wins.
		if past > most+slackEps {
			best, most = t.Name, past
		}
	}
	return best
}
