package policy

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/shares"
)

// teamState is what rule 9 knows of the teams at one tick: each team's
// use of the fixed quota, kept up to date as this tick's moves change it,
// and which running jobs are loans.
//
// A team's use is the thousandths of slots (Job.milliSlots) of its jobs
// running on fixed workers that are up and staying there, placed on fixed
// workers, or bound for the core or loan queue. Jobs being reclaimed are
// not in it: their slots are on their way back, which is how a reclaim in
// flight counts for the owner it was made for.
type teamState struct {
	cfg   shares.Config
	quota int // the fixed slots that are up: what Split divides
	used  map[string]int64
	// running lists, per team, its jobs running on fixed quota and
	// staying: what loans are chosen from.
	running map[string][]*Job
	// minWithin is the strictest reclaim_within of any team: common
	// slots are lent under it (see reclaimable).
	minWithin time.Duration
	// loan marks the running jobs that are loans (see attribute), once
	// attributed.
	loan       map[*Job]bool
	attributed bool
	lastSlack  slackMemo
}

// teamsOf measures the teams for a tick; nil when shares are off.
func (p *planner) teamsOf() *teamState {
	c := p.cfg.Shares
	if !c.On() {
		return nil
	}
	ts := &teamState{cfg: c, quota: p.fixed.Slots, used: map[string]int64{}, running: map[string][]*Job{}}
	for i, t := range c.Teams {
		if i == 0 || t.ReclaimWithin < ts.minWithin {
			ts.minWithin = t.ReclaimWithin
		}
	}
	for _, w := range p.workers {
		if !p.fixedUp(w) {
			continue
		}
		for _, j := range w.jobs {
			if j.leaves() {
				continue
			}
			ts.used[j.Team] += j.milliSlots()
			ts.running[j.Team] = append(ts.running[j.Team], j)
		}
	}
	// Placed jobs hold their slots already; the queues' counts leave
	// them out.
	for r := range p.ix.placed {
		if q := r.destination(); q == QueueCore || q == QueueLoan {
			ts.used[r.Team] += r.milliSlots()
		}
	}
	for team, m := range p.ix.teamBound {
		ts.used[team] += m
	}
	return ts
}

// share is team's share in thousandths of slots; 0 for a team without.
func (ts *teamState) share(team string) int64 {
	t, _ := ts.cfg.Team(team)
	return int64(t.Slots) * 1000
}

// borrowLimit is how many thousandths of slots above its share team may
// hold. A team without a share has no limit but the quota: it owns
// nothing, and common slots are anyone's.
func (ts *teamState) borrowLimit(team string) int64 {
	t, ok := ts.cfg.Team(team)
	if !ok {
		return int64(ts.quota) * 1000
	}
	return int64(t.BorrowLimit) * 1000
}

// within reports whether team uses no more than its share, its queued
// work included: all of that work is then within the share. (A sized
// job needs its slots on one worker, so rule 1 reclaims for it by
// itself; only an owner's sized work does under shares.)
func (ts *teamState) within(team string) bool { return ts.used[team] <= ts.share(team) }

// borrowed is how many thousandths of slots team uses above its share.
func (ts *teamState) borrowed(team string) int64 {
	return max(ts.used[team]-ts.share(team), 0)
}

// borrowedSlots is borrowed for every team that uses fixed slots, in
// slots: what shares.Config.FairOrder reads.
func (ts *teamState) borrowedSlots() map[string]float64 {
	out := make(map[string]float64, len(ts.used))
	for team := range ts.used {
		out[team] = float64(ts.borrowed(team)) / 1000
	}
	return out
}

// weighted is team's borrowed slots over its weight: the fairness
// measure of borrowing.
func (ts *teamState) weighted(team string, borrowed int64) float64 {
	t, _ := ts.cfg.Team(team)
	w := t.Weight
	if w <= 0 {
		w = 1
	}
	return float64(borrowed) / 1000 / w
}

// slack is how many slots of lendable room are left once team uses extra
// thousandths of slots more: free common slots plus every lender's idle
// share up to its lend limit, less everything borrowed, as
// shares.Config.Split attributes it. Negative when borrowers hold more
// than may be lent (an owner came back and its reclaims are not yet
// planned).
func (ts *teamState) slack(team string, extra int64) float64 {
	if extra == 0 {
		team = ""
	}
	// A tick asks the same question over and over (each queued loan, each
	// candidate of a kind) while no use changes: the teams are few, so
	// comparing their use costs far less than a Split.
	c := &ts.lastSlack
	if c.used != nil && c.team == team && c.extra == extra && maps.Equal(c.used, ts.used) {
		return c.value
	}
	v := ts.computeSlack(team, extra)
	*c = slackMemo{team: team, extra: extra, used: maps.Clone(ts.used), value: v}
	return v
}

// slackMemo is the last answer of slack.
type slackMemo struct {
	team  string
	extra int64
	used  map[string]int64
	value float64
}

// computeSlack is slack without the memo.
func (ts *teamState) computeSlack(team string, extra int64) float64 {
	used := make(map[string]float64, len(ts.used)+1)
	for t, m := range ts.used {
		used[t] = float64(m) / 1000
	}
	used[team] += float64(extra) / 1000
	sp := ts.cfg.Split(ts.quota, used)
	slack := sp.CommonIdle
	var borrowed, attributed float64
	for _, t := range ts.cfg.Teams {
		own := sp.Own[t.Name]
		idle := float64(t.Slots) - own
		taken := idle - sp.Idle[t.Name]
		slack += min(idle, float64(t.LendLimit)) - taken
	}
	for t, u := range used {
		borrowed += max(u-float64(ts.share(t))/1000, 0)
	}
	for _, l := range sp.Loans {
		attributed += l.Slots
	}
	// Use past the quota stays unattributed by Split: no room for it.
	return slack - max(borrowed-attributed, 0)
}

// slackEps absorbs the rounding of Split's proportions.
const slackEps = 1e-6

// reclaimable reports whether j may run above its team's share: it can
// be stopped without losing its work and run again, within the strictest
// promise any team was made. Common slots are lent under the strictest
// promise, and a loan's lender changes as others' use changes, so the
// strictest bound is the only safe one.
func (p *planner) reclaimable(j *Job) bool {
	return j.Checkpointable && j.Retryable && j.Grace+p.cfg.Tick <= p.teams.minWithin
}

// mayTake reports whether j may take fixed slots under shares, and
// whether it does so within its team's share. counted says j's slots are
// in its team's use already (a queued job being placed), not yet (a job
// being admitted, lent or migrated). Within the share it always may: the
// owner wins, and rule 9 reclaims loans for it. Above, only reclaimable
// work within its team's borrow limit, while the lendable room covers
// every loan.
func (p *planner) mayTake(j *Job, counted bool) (ok, inShare bool) {
	ts := p.teams
	m := j.milliSlots()
	base := ts.used[j.Team]
	extra := m
	if counted {
		base -= m
		extra = 0
	}
	after := base + m
	if after <= ts.share(j.Team) {
		return true, true
	}
	if !p.reclaimable(j) || after-ts.share(j.Team) > ts.borrowLimit(j.Team) {
		return false, false
	}
	return ts.slack(j.Team, extra) >= -slackEps, false
}

// shareMove keeps the teams' use up to date as a of job j is planned.
// It runs before the move is recorded, so j still reads as it was.
func (p *planner) shareMove(a Action, j *Job) {
	ts := p.teams
	if ts == nil || j == nil {
		return
	}
	m := j.milliSlots()
	switch a.Kind {
	case Admit, Lend, Migrate:
		ts.used[j.Team] += m
	case Unlend:
		ts.used[j.Team] -= m
	case Reclaim:
		ts.used[j.Team] -= m
		ts.running[j.Team] = slices.DeleteFunc(ts.running[j.Team], func(x *Job) bool { return x == j })
	case Overflow:
		if p.destination(j) == QueueCore {
			ts.used[j.Team] -= m
		}
	}
}

// attribute decides which running jobs are loans: each team's jobs on
// fixed quota in order (work that is not reclaimable first, so it is the
// part within the share; then by start, then ID), each within the share
// if it fits in what the jobs before it left, a loan otherwise. Only
// loans are ever reclaimed for another team. It returns, per team, the
// thousandths of slots its running jobs use within its share.
func (ts *teamState) attribute(p *planner) map[string]int64 {
	inShare := map[string]int64{}
	if ts.attributed {
		for team, js := range ts.running {
			for _, j := range js {
				if !ts.loan[j] {
					inShare[team] += j.milliSlots()
				}
			}
		}
		return inShare
	}
	ts.attributed = true
	ts.loan = map[*Job]bool{}
	for _, team := range slices.Sorted(maps.Keys(ts.running)) {
		js := ts.running[team]
		slices.SortFunc(js, func(a, b *Job) int {
			return cmp.Or(boolRank(!p.reclaimable(a), !p.reclaimable(b)), a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ID, b.ID))
		})
		room := ts.share(team)
		for _, j := range js {
			if m := j.milliSlots(); m <= room {
				room -= m
				inShare[team] += m
			} else {
				ts.loan[j] = true
			}
		}
	}
	return inShare
}
