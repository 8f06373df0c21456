package policy

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// reclaim is rule 1. Core work owns the fixed quota: when queued core jobs
// need more slots than are free (counting slots already being handed
// back) and burst jobs are borrowing fixed slots, borrowed jobs go back to
// burst until the slots they free cover the core work that could not
// otherwise start. The victims are the jobs that lose least: the shortest
// time since their last checkpoint (or start, if they cannot resume), the
// newest start on a tie.
//
// One-slot core jobs take any free slot, so for them the count is
// fixed-wide. A sized core job needs its slots on one worker: for the
// first one that fits nowhere, the victims are borrowed jobs on one fixed
// worker whose freed slots plus that worker's free ones reach its size
// (see reclaimFor); for a gang, borrowed jobs on fixed workers of one
// region until every member fits (see reclaimForGang). A borrowed gang is
// reclaimed whole, by member 0's worker, and frees its slots on every
// member's worker.
func (p *planner) reclaim() {
	if p.teams != nil {
		p.reclaimForOwners()
		return
	}
	free := p.freeFixed
	p.short = p.coreQueued.slots() - free - p.reclaiming - p.freedSized
	// Sized core jobs rule 8 did not place need their slots on one
	// worker: reclaimSized took care of them, the fixed-wide count is not
	// theirs.
	short := p.short - p.sizedCoreLeft()
	if short <= 0 {
		return
	}
	var victims []*Job
	for _, w := range p.workers {
		if !p.fixedUp(w) {
			continue
		}
		for _, j := range w.jobs {
			if p.borrowed(j) {
				victims = append(victims, j)
			}
		}
	}
	slices.SortFunc(victims, p.victimOrder)
	for _, j := range victims {
		if short <= 0 {
			break
		}
		n := p.freedOnFixed(j)
		short -= n
		p.short -= n
		p.reclaimOne(j, fmt.Sprintf("%d core queued, %d free fixed slots, %d reclaims in flight; loses %s of work",
			p.coreQueued.slots(), free, p.reclaiming, p.lostWork(j)))
	}
}

// reclaimSized is the part of rule 1 for sized core work, before rule 8
// places it: the first sized core job that fits on no fixed worker gets
// one freed (see reclaimFor), unless a sized core job already waits
// placed, whose reservation frees a worker as it is.
func (p *planner) reclaimSized() {
	j := p.sizedCoreHead()
	if j != nil && p.teams != nil {
		// Under shares only an owner's work reclaims, and only loans.
		p.teams.attribute(p)
		p.owner = j.Team
		defer func() { p.owner = "" }()
	}
	switch {
	case j == nil:
	case j.gang():
		p.reclaimForGang(j)
	default:
		p.reclaimFor(j)
	}
}

// borrowed reports whether running job j is burst work on fixed quota
// that rule 1 may send back. Under shares it is a loan (see attribute)
// of a team other than the owner being reclaimed for, of either class.
func (p *planner) borrowed(j *Job) bool {
	if p.teams != nil {
		return p.teams.loan[j] && j.Team != p.owner && p.movable(j)
	}
	return j.Class == jobs.ClassBurst && p.movable(j)
}

// freedOnFixed is what reclaiming j frees of the fixed quota: its slots
// on every fixed worker a member of it runs on.
func (p *planner) freedOnFixed(j *Job) int {
	if !j.gang() {
		if w := p.worker[j.Worker]; w != nil {
			return p.freedOn(j, w)
		}
		return j.slotsOn(j.Worker)
	}
	n := 0
	for _, id := range uniqueWorkers(j) {
		if w := p.worker[id]; w != nil && p.fixedUp(w) {
			n += j.slotsOn(id)
		}
	}
	return n
}

// freedOn is the whole slots reclaiming j frees on worker w. A job with
// a share of a GPU frees only the slots that empty once its share leaves
// with those already leaving, in flight or this tick: shares pack, so
// reclaiming one of several on a slot frees nothing. Counting a whole
// slot would leave core work waiting for a slot no reclaim frees, and the
// next tick, which counts reclaims in flight so (Index), would reclaim
// another share for the same slot.
func (p *planner) freedOn(j *Job, w *workerRec) int { return p.freedAfter(j, w, 0) }

// freedAfter is freedOn once other thousandths of a GPU more on w, of
// victims being chosen, leave too.
func (p *planner) freedAfter(j *Job, w *workerRec, other int64) int {
	if !p.packs(j) || j.Worker != w.ID {
		return j.slotsOn(w.ID)
	}
	leaving := other
	var all int64
	if u := w.use; u != nil {
		all, leaving = u.shared, leaving+u.sharedLeaving
	}
	if t := p.tick[w]; t != nil {
		leaving += t.sharedLeaving
	}
	return wholeOf(all-leaving) - wholeOf(all-leaving-int64(j.Share))
}

// packs reports whether freedOn counts j's share of a GPU rather than a
// slot.
func (p *planner) packs(j *Job) bool { return j.Share > 0 && j.running() }

// uniqueWorkers lists the workers j runs on, each once: member 0's first.
func uniqueWorkers(j *Job) []string {
	if len(j.Placed) == 0 {
		return []string{j.Worker}
	}
	out := make([]string, 0, len(j.Placed))
	for _, id := range j.Placed {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func (p *planner) victimOrder(a, b *Job) int {
	return cmp.Or(cmp.Compare(p.lostWork(a), p.lostWork(b)), b.StartedAt.Compare(a.StartedAt), cmp.Compare(a.ID, b.ID))
}

// reclaimOne plans the reclaim of victim j. The action
// names the job's worker (member 0's for a gang: it checkpoints and
// requeues the whole gang, and the others stop), and every member's
// worker counts its slots as leaving.
func (p *planner) reclaimOne(j *Job, reason string) { p.reclaimJob(j, reason, false) }

// reclaimJob is reclaimOne, marked as rebalancing's (rule 9) when
// rebalance is set.
func (p *planner) reclaimJob(j *Job, reason string, rebalance bool) {
	for _, id := range uniqueWorkers(j) {
		if mw := p.worker[id]; mw != nil {
			n := p.freedOn(j, mw)
			u := p.tickUse(mw)
			if p.packs(j) {
				u.sharedLeaving += int64(j.Share)
			}
			u.leaving += n
		}
	}
	a := Action{Kind: Reclaim, Job: j.ID, Worker: j.Worker, Queue: QueueBurst, Rule: 1, Reason: reason}
	if p.teams != nil {
		// Rule 9: a core loan goes back to wait for admission.
		a.Rule, a.Team, a.Owner, a.Rebalance = 9, j.Team, p.owner, rebalance
		if isCore(j) {
			a.Queue = QueueHeld
		}
	}
	p.add(a, j)
}

// sizedCoreHead returns the first queued sized core job that fits on no
// fixed worker, not even counting the slots reclaims in flight are
// freeing there, when no sized core job waits placed already.
func (p *planner) sizedCoreHead() *Job {
	s := p.ix.sized[queueKey{QueueCore, string(jobs.ClassCore)}]
	if s == nil {
		return nil
	}
	for r := range p.ix.placed {
		if r.Queue == QueueCore && !p.unplacing(r.Job) {
			return nil
		}
	}
	for j := range s.all() {
		if p.movable(j) && !p.fitsFixedWorker(j) && (p.teams == nil || p.teams.within(j.Team)) {
			return j
		}
	}
	return nil
}

// sizedCoreLeft is the slots of the queued sized core jobs that are still
// unplaced after rule 8: what the core count holds for them. A sized
// share packs there with the others, so it holds a slot only where the
// packed count falls without it; counted whole, it would hide a one-slot
// share's need for a slot, and that share would wait for ever.
func (p *planner) sizedCoreLeft() int {
	s := p.ix.sized[queueKey{QueueCore, string(jobs.ClassCore)}]
	if s == nil {
		return 0
	}
	rest := p.coreQueued
	for j := range s.all() {
		if !p.placing[j.ID] {
			rest.sub(j)
		}
	}
	return p.coreQueued.slots() - rest.slots()
}

// fitsFixedWorker reports whether fixed workers that may run j have its
// slots free, or being freed by reclaims in flight (for a gang, room for
// every member on workers of one region), or whether they could never run
// it at all (nothing to reclaim for).
func (p *planner) fitsFixedWorker(j *Job) bool {
	if !p.fixedCanRun(j) {
		return true
	}
	room := map[string]int{}
	for _, w := range p.workers {
		if !p.fixedUp(w) || !canHold(w, j) {
			continue
		}
		r := w.pool.Region
		if room[r] += max(w.Slots-p.busy(w)+p.use(w).reclaiming, 0) / j.slots(); room[r] >= j.replicas() {
			return true
		}
	}
	return false
}

// reclaimFor frees one fixed worker for sized core job j: of the workers
// that may run it where its free slots plus those of borrowed jobs reach
// its size, the one whose victims (least lost work first, as few as
// reach it) lose least in all, then fewest victims, then ID. Under shares
// victims and workers are chosen as rule 9 chooses them for one-slot
// work (see share_victims.go): whole loans before those partly within
// their team's share, the biggest borrower's first, then least lost work.
func (p *planner) reclaimFor(j *Job) {
	ranks := p.sizedRanks()
	order := p.sizedVictimOrder(ranks)
	var best *workerRec
	var bestVictims []*Job
	var bestCost victimCost
	for _, w := range p.workers {
		if !p.fixedUp(w) || !canHold(w, j) {
			continue
		}
		have := w.Slots - p.busy(w) + p.use(w).reclaiming
		var cands []*Job
		for _, v := range w.jobs {
			if p.borrowed(v) {
				cands = append(cands, v)
			}
		}
		slices.SortFunc(cands, order)
		var cost victimCost
		var shared int64 // of the victims so far, for freedAfter
		n := 0
		for n < len(cands) && have < j.slots() {
			v := cands[n]
			have += p.freedAfter(v, w, shared)
			if p.packs(v) {
				shared += int64(v.Share)
			}
			p.addVictim(&cost, v, ranks)
			n++
		}
		if have < j.slots() {
			continue
		}
		if best == nil || cost.compare(bestCost) < 0 {
			best, bestVictims, bestCost = w, cands[:n], cost
		}
	}
	for _, v := range bestVictims {
		p.freedSized += p.freedOn(v, best)
		p.reclaimOne(v, fmt.Sprintf("core job %s needs %d slots on one fixed worker; %s has %d free; loses %s of work",
			j.ID, j.slots(), best.ID, best.Slots-p.busy(best), p.lostWork(v)))
	}
}

// reclaimForGang frees fixed workers of one region for queued core gang j:
// borrowed jobs are taken, a step at a time, until every member fits. Each
// step is the cheapest way to make room for one more member on one
// worker: the fewest of that worker's borrowed jobs, least lost work
// first, whose slots reach the next member's. A victim frees its slots on
// every worker it runs on, so a borrowed gang counts wherever it is. Of
// the regions where the gang can be made to fit, the one whose victims
// lose least in all wins, then the fewest victims. Under shares steps
// and regions compare as reclaimFor's workers do (see victimCost). Rule
// 8 then reserves the freed workers for the gang.
func (p *planner) reclaimForGang(j *Job) {
	k, n := j.slots(), j.replicas()
	byRegion := map[string][]*workerRec{}
	var regions []string
	for _, w := range p.workers {
		if !p.fixedUp(w) || !canHold(w, j) {
			continue
		}
		r := w.pool.Region
		if byRegion[r] == nil {
			regions = append(regions, r)
		}
		byRegion[r] = append(byRegion[r], w)
	}
	slices.Sort(regions)
	var best []*Job
	var bestCost victimCost
	found := false
	ranks := p.sizedRanks()
	for _, r := range regions {
		victims, cost, ok := p.gangVictims(byRegion[r], k, n, ranks)
		if ok && (!found || cost.compare(bestCost) < 0) {
			best, bestCost, found = victims, cost, true
		}
	}
	for _, v := range best {
		p.freedSized += p.freedOnFixed(v)
		p.reclaimOne(v, fmt.Sprintf("core gang %s needs %d x %d slots on fixed workers of one region; loses %s of work",
			j.ID, n, k, p.lostWork(v)))
	}
}

// gangVictims picks the borrowed jobs on ws (fixed workers of one region)
// whose reclaim makes room for n members of k slots (see reclaimForGang),
// with what they cost; ok is false when no choice does. ranks is
// sizedRanks.
func (p *planner) gangVictims(ws []*workerRec, k, n int, ranks map[string]int) (victims []*Job, cost victimCost, ok bool) {
	order := p.sizedVictimOrder(ranks)
	have := make(map[*workerRec]int, len(ws))
	cands := make(map[*workerRec][]*Job, len(ws))
	for _, w := range ws {
		have[w] = w.Slots - p.busy(w) + p.use(w).reclaiming
		for _, v := range w.jobs {
			if p.borrowed(v) {
				cands[w] = append(cands[w], v)
			}
		}
		slices.SortFunc(cands[w], order)
	}
	members := func() int {
		m := 0
		for _, w := range ws {
			m += max(have[w], 0) / k
		}
		return m
	}
	taken := map[*Job]bool{}
	// shared is, per worker, the GPU shares of the victims taken (see
	// freedAfter).
	shared := map[*workerRec]int64{}
	// Each step adds at least one member, so n steps bound the loop.
	for step := 0; members() < n && step < n; step++ {
		var at *workerRec
		var pick []*Job
		var pickCost victimCost
		for _, w := range ws {
			next := (max(have[w], 0)/k + 1) * k
			if next > w.Slots {
				continue
			}
			var got []*Job
			// The step alone is compared, its victims' shares counted
			// after those already taken.
			c := victimCost{removed: maps.Clone(cost.removed)}
			freed, sh := have[w], shared[w]
			for _, v := range cands[w] {
				if freed >= next {
					break
				}
				if taken[v] {
					continue
				}
				got = append(got, v)
				freed += p.freedAfter(v, w, sh)
				if p.packs(v) {
					sh += int64(v.Share)
				}
				p.addVictim(&c, v, ranks)
			}
			if freed < next {
				continue
			}
			if at == nil || c.compare(pickCost) < 0 {
				at, pick, pickCost = w, got, c
			}
		}
		if at == nil {
			return nil, victimCost{}, false
		}
		for _, v := range pick {
			taken[v] = true
			victims = append(victims, v)
			p.addVictim(&cost, v, ranks)
			for _, id := range uniqueWorkers(v) {
				if mw := p.worker[id]; mw != nil {
					if _, in := have[mw]; in {
						have[mw] += p.freedAfter(v, mw, shared[mw])
						if p.packs(v) {
							shared[mw] += int64(v.Share)
						}
					}
				}
			}
		}
	}
	return victims, cost, members() >= n
}
