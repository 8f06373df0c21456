package policy

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// view is a snapshot indexed for the rules. It points into the caller's
// slices and never writes through those pointers. Every list a rule walks
// in order is sorted by a total order ending in an ID, so the plan does not
// depend on the order the snapshot was built in (duplicate IDs, which
// Validate reports, are the exception: the first one wins). References to
// unknown pools or workers are dropped here: a job on an unknown worker, or
// a worker of an unknown pool, is never acted on.
type view struct {
	cfg Config
	now time.Time

	pools   map[string]*Pool
	workers []*Worker // by ID, known pools only
	worker  map[string]*Worker
	jobs    []*Job            // in snapshot order, for counting
	queue   []*Job            // queued jobs, in queue order
	on      map[string][]*Job // running jobs by worker ID

	fixed FixedLoad
	// fixedRegions are the regions of the fixed workers that are up: a
	// pinned job may only be lent if every one of them matches, because any
	// fixed worker may take it from the loan queue.
	fixedRegions map[string]bool
	// reclaiming counts reclaims in flight from fixed workers that are up:
	// each will hand its slot to a queued core job.
	reclaiming int
	// demand is the elastic bookkeeping, one entry per elastic pool.
	demand map[string]*poolDemand
	// elastic lists the elastic pools by name; byPrice cheapest first.
	elastic, byPrice []*poolDemand
}

func newView(s Snapshot, now time.Time) *view {
	v := &view{
		cfg:          s.Config,
		now:          now,
		pools:        make(map[string]*Pool, len(s.Pools)),
		worker:       make(map[string]*Worker, len(s.Workers)),
		on:           make(map[string][]*Job),
		fixedRegions: map[string]bool{},
		demand:       map[string]*poolDemand{},
	}
	for i := range s.Pools {
		if _, dup := v.pools[s.Pools[i].Name]; !dup {
			v.pools[s.Pools[i].Name] = &s.Pools[i]
		}
	}

	for i := range s.Workers {
		w := &s.Workers[i]
		if _, dup := v.worker[w.ID]; dup || v.pools[w.Pool] == nil {
			continue
		}
		v.worker[w.ID] = w
		v.workers = append(v.workers, w)
	}
	slices.SortFunc(v.workers, func(a, b *Worker) int { return cmp.Compare(a.ID, b.ID) })

	seen := seenSets.Get().(map[string]bool)
	defer func() { clear(seen); seenSets.Put(seen) }()
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if seen[j.ID] || !(j.queued() || j.running()) {
			continue
		}
		seen[j.ID] = true
		switch {
		case j.queued():
			v.queue = append(v.queue, j)
		case v.worker[j.Worker] == nil:
			continue
		default:
			v.on[j.Worker] = append(v.on[j.Worker], j)
		}
		v.jobs = append(v.jobs, j)
	}
	slices.SortFunc(v.queue, byQueueOrder)

	v.measureFixed()
	v.measureElastic(s.Launches)
	return v
}

// seenSets lends newView its duplicate-ID sets across calls: Decide runs
// every tick, and the simulator runs it hundreds of thousands of times a
// plan, where growing a fresh set each call was a large share of the cost.
// A set is cleared before it is handed back, so no call sees another's IDs
// and Decide stays a function of its arguments.
var seenSets = sync.Pool{New: func() any { return map[string]bool{} }}

// kind is the kind of the worker's pool.
func (v *view) kind(w *Worker) PoolKind { return v.pools[w.Pool].Kind }

// busy is how many slots the worker uses: the larger of what it reports and
// what the job records say, so a lagging heartbeat never makes room that
// is not there.
func (v *view) busy(w *Worker) int {
	return min(max(w.Busy, len(v.on[w.ID]), 0), max(w.Slots, 0))
}

// empty reports whether nothing runs on the worker by either account.
func (v *view) empty(w *Worker) bool { return w.Busy <= 0 && len(v.on[w.ID]) == 0 }

// fixedUp reports whether w is a fixed worker taking work.
func (v *view) fixedUp(w *Worker) bool { return v.kind(w) == PoolFixed && w.State == WorkerUp }

func (v *view) measureFixed() {
	for _, w := range v.workers {
		if !v.fixedUp(w) || w.Slots <= 0 {
			continue
		}
		v.fixed.Slots += w.Slots
		v.fixed.Busy += v.busy(w)
		v.fixedRegions[v.pools[w.Pool].Region] = true
	}
	for _, j := range v.jobs {
		switch j.destination() {
		case QueueCore:
			v.fixed.QueuedCore++
		case QueueLoan:
			v.fixed.Loans++
		}
		if j.PendingAction == Reclaim && j.running() && v.fixedUp(v.worker[j.Worker]) {
			v.reclaiming++
		}
	}
}

// fitsFixed reports whether every fixed worker that could take the job from
// the loan queue is in a region the job allows.
func (v *view) fitsFixed(j *Job) bool {
	for r := range v.fixedRegions {
		if !j.fitsRegion(r) {
			return false
		}
	}
	return true
}

// lostWork is what stopping a running job now throws away.
func (v *view) lostWork(j *Job) time.Duration { return max(v.now.Sub(j.since()), 0) }
