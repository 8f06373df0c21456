package policy

import (
	"cmp"
	"maps"
	"slices"
)

// The order of victims under team shares (rule 9), shared by the
// reclaims for one-slot work (reclaimForOwners) and for sized and gang
// work (reclaimFor, reclaimForGang), so an owner's sized job takes the
// same loans its one-slot work would:
//
//  1. whole loans first: a loan whose reclaim would bring its team's use
//     below its share is partly within that share (a sized job, or a
//     share of a GPU, that only partly fits), and is taken only when no
//     other victim exists for the owner. The owner's guarantee comes
//     first; the borrower, then below its share, is owed the difference
//     back in turn and its reclaimed work is readmitted first.
//  2. from the borrower with the most borrowed slots over weight (then
//     the most decayed usage, then name);
//  3. least lost work since the checkpoint, then the newest start, then
//     ID (victimOrder).

// partlyInShare reports whether reclaiming j, once removed more
// thousandths of slots of its team are gone, would bring its team's use
// below its share.
func (ts *teamState) partlyInShare(j *Job, removed int64) bool {
	return ts.used[j.Team]-removed-j.milliSlots() < ts.share(j.Team)
}

// borrowerRanks numbers the teams that use fixed slots by the order
// victims are taken from: the most borrowed over weight first, then the
// most decayed usage, then name.
func (p *planner) borrowerRanks() map[string]int {
	ts := p.teams
	teams := slices.Sorted(maps.Keys(ts.used))
	slices.SortStableFunc(teams, func(a, b string) int {
		return cmp.Or(cmp.Compare(ts.weighted(b, ts.borrowed(b)), ts.weighted(a, ts.borrowed(a))),
			cmp.Compare(p.ix.teamUsage[b], p.ix.teamUsage[a]))
	})
	ranks := make(map[string]int, len(teams))
	for i, t := range teams {
		ranks[t] = i
	}
	return ranks
}

// sizedRanks is borrowerRanks under shares, nil with shares off.
func (p *planner) sizedRanks() map[string]int {
	if p.teams == nil {
		return nil
	}
	return p.borrowerRanks()
}

// sizedVictimOrder is victimOrder under shares (see above); victimOrder
// itself with shares off. ranks is borrowerRanks.
func (p *planner) sizedVictimOrder(ranks map[string]int) func(a, b *Job) int {
	if p.teams == nil {
		return p.victimOrder
	}
	ts := p.teams
	return func(a, b *Job) int {
		return cmp.Or(boolRank(!ts.partlyInShare(a, 0), !ts.partlyInShare(b, 0)),
			cmp.Compare(ranks[a.Team], ranks[b.Team]), p.victimOrder(a, b))
	}
}

// victimCost is what a set of victims of a sized reclaim costs. Sets
// compare, under shares, by how many victims are partly within their
// team's share, then by the rank (borrowerRanks) of the least borrowing
// team among them, so the set taken from the biggest borrower wins; then,
// shares on or off, by the work they lose and how many they are.
type victimCost struct {
	partial, worst int
	loss           int64
	n              int
	// removed is, per team, the thousandths of slots the set takes.
	removed map[string]int64
}

// addVictim counts victim v into c.
func (p *planner) addVictim(c *victimCost, v *Job, ranks map[string]int) {
	c.loss += int64(p.lostWork(v))
	c.n++
	ts := p.teams
	if ts == nil {
		return
	}
	if ts.partlyInShare(v, c.removed[v.Team]) {
		c.partial++
	}
	c.worst = max(c.worst, ranks[v.Team])
	if c.removed == nil {
		c.removed = map[string]int64{}
	}
	c.removed[v.Team] += v.milliSlots()
}

// compare orders costs, the cheapest first.
func (c victimCost) compare(d victimCost) int {
	return cmp.Or(cmp.Compare(c.partial, d.partial), cmp.Compare(c.worst, d.worst),
		cmp.Compare(c.loss, d.loss), cmp.Compare(c.n, d.n))
}
