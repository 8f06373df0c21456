package policy

import (
	"cmp"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Index is a Snapshot kept up to date by changes instead of being rebuilt:
// the caller puts and removes jobs and workers as they change, and
// [Index.Decide] plans from it. It keeps what every tick's plan starts
// from already ordered and counted: queued jobs by queue and class in
// queue order, running jobs by worker, workers by ID and by pool, and the
// counts of work bound for fixed quota and for overflow. A tick then costs
// what its rules look at (the head of a queue, the victims of a reclaim,
// the workers), not the whole backlog and every running job.
//
// Decide(s, now) is IndexOf(s).Decide(now): both give the same plan for the
// same state, whatever order the changes came in (Index.Check verifies the
// upkeep against a rebuild). An Index is not safe for concurrent use, and
// Decide must not run while it is being changed.
type Index struct {
	cfg      Config
	poolList []Pool
	pools    map[string]*Pool // the first pool of each name

	jobs    map[string]*jobRec
	workers map[string]*workerRec
	// sorted are the workers by ID; byPool the same, per pool.
	sorted []*workerRec
	byPool map[string][]*workerRec
	// scr is the working memory Decide reuses (scratch.go).
	scr *scratch
	// orphans are running jobs whose worker is not (or not yet) known, by
	// worker ID: Decide never acts on them, as on a job of an unknown
	// worker in a snapshot.
	orphans map[string]map[*jobRec]bool

	// queued holds the queued jobs by queue and class.
	queued map[queueKey]*jobSet
	// redirected are the shown jobs with a move in flight: where they are
	// going is not where they are.
	redirected map[*jobRec]bool
	// toCore and toLoan count shown jobs by destination (FixedLoad's
	// QueuedCore and Loans); toOverflow the queued ones bound for each
	// on-demand pool.
	toCore, toLoan int
	toOverflow     map[string]int
	// coreShares, loanShares and overflowShares are the same for jobs
	// that share a GPU, in thousandths of one: they pack, so they count
	// as their sum rounded up (see queuedCore, queuedLoans, and rule 3's
	// measureElastic for the overflow).
	coreShares, loanShares int64
	overflowShares         map[string]int64
	// use is, by worker ID, the slots (and CPUs and memory) the records
	// hold there: running jobs' members and placed jobs' members. Kept by
	// ID, so a worker that registers late finds its count.
	use map[string]*slotUse
	// sized holds the queued sized jobs not yet placed, by queue and
	// class, in queue order (they are in queued too): what rule 8 walks.
	sized map[queueKey]*jobSet
	// placed are the queued jobs already placed (waiting for their
	// workers' slots).
	placed map[*jobRec]bool
	// knownHomes counts queued burst jobs in the burst queue with a known
	// elastic home: without any, rule 3's rehome has nothing to look at.
	knownHomes int

	// teamBound is, by team, the thousandths of slots of the shown jobs
	// that toCore and toLoan count (see Job.milliSlots): the queued part
	// of each team's use of the fixed quota under shares (rule 9).
	teamBound map[string]int64
	// held holds the jobs queued in QueueHeld by team, in queue order:
	// what rule 9 admits, team by team.
	held map[string]*jobSet

	launches []Launch
	free     []*jobRec
	// teamUsage is Snapshot.TeamUsage (see SetTeamUsage).
	teamUsage map[string]float64
}

// queueKey names one of the index's queue sets.
type queueKey struct {
	queue Queue
	class string
}

// jobRec is one job in the index. Job points at own, which PutJob fills,
// or, in an index built by IndexOf, into the snapshot, which is never
// written through it: a rebuild copies no job.
type jobRec struct {
	*Job
	own   *Job
	w     *workerRec // the worker it runs on, while shown and running
	wpos  int        // its place in w.jobs
	shown bool       // Decide sees it: queued, or running on a known worker
}

// workerRec is one worker of a known pool with the jobs it runs.
type workerRec struct {
	Worker
	pool *Pool
	jobs []*Job
	recs []*jobRec // parallel to jobs
	// use is ix.use[ID], kept in step by holdOn and PutWorker: the view
	// reads a worker's use many times a tick, and following a pointer
	// costs far less than hashing the worker's ID each time.
	use *slotUse
}

// slotUse is what the job records hold on one worker: the slots of
// running members (used), of those with a reclaim in flight (reclaiming)
// and with a reclaim or migration in flight (leaving), the slots held for
// placed members still queued (held), thousandths of CPUs and bytes.
// Running jobs that share a GPU are kept apart, in thousandths of one
// (shared, and of those sharedReclaiming and sharedLeaving): they pack,
// so the slots they fill follow from the sums (see slots), which is what
// the index stores exactly and incrementally.
type slotUse struct {
	used, reclaiming, leaving, held         int
	milliCPU, memory                        int64
	shared, sharedReclaiming, sharedLeaving int64
}

// slots is u with its shares turned into the whole slots they fill: their
// sum rounded up, and as leaving (or being reclaimed) the slots that would
// empty if those shares left, so used minus leaving is what stays.
func (u slotUse) slots() slotUse {
	if u.shared == 0 {
		return u
	}
	all := wholeOf(u.shared)
	u.used += all
	u.leaving += all - wholeOf(u.shared-u.sharedLeaving)
	u.reclaiming += all - wholeOf(u.shared-u.sharedReclaiming)
	return u
}

// NewIndex returns an empty index for a config and set of pools, which stay
// fixed for its life: a change to either is a new index.
func NewIndex(c Config, pools []Pool) *Index {
	ix := &Index{
		cfg:            c,
		poolList:       slices.Clone(pools),
		pools:          make(map[string]*Pool, len(pools)),
		jobs:           map[string]*jobRec{},
		workers:        map[string]*workerRec{},
		byPool:         map[string][]*workerRec{},
		orphans:        map[string]map[*jobRec]bool{},
		queued:         map[queueKey]*jobSet{},
		redirected:     map[*jobRec]bool{},
		toOverflow:     map[string]int{},
		overflowShares: map[string]int64{},
		use:            map[string]*slotUse{},
		sized:          map[queueKey]*jobSet{},
		placed:         map[*jobRec]bool{},
		teamBound:      map[string]int64{},
		held:           map[string]*jobSet{},
	}
	for i := range ix.poolList {
		if _, dup := ix.pools[ix.poolList[i].Name]; !dup {
			ix.pools[ix.poolList[i].Name] = &ix.poolList[i]
		}
	}
	return ix
}

// IndexOf builds an index from a snapshot: the full rebuild. Of jobs or
// workers sharing an ID (which Validate reports), the first wins, as in
// Decide.
func IndexOf(s Snapshot) *Index {
	ix := NewIndex(s.Config, s.Pools)
	ix.teamUsage = s.TeamUsage
	for _, w := range s.Workers {
		if _, dup := ix.workers[w.ID]; !dup {
			ix.PutWorker(w)
		}
	}
	// One array of records, and each queue set sorted once: a rebuild
	// costs a sort of the backlog, as the snapshot's view did.
	ix.jobs = make(map[string]*jobRec, len(s.Jobs))
	recs := make([]jobRec, len(s.Jobs))
	byKey := map[queueKey][]*Job{}
	for i, j := range s.Jobs {
		if _, dup := ix.jobs[j.ID]; dup || !(j.queued() || j.running()) {
			continue
		}
		r := &recs[i]
		r.Job = &s.Jobs[i]
		ix.jobs[j.ID] = r
		if j.running() {
			ix.link(r)
			continue
		}
		k := queueKey{j.Queue, string(j.Class)}
		byKey[k] = append(byKey[k], r.Job)
		ix.hold(r.Job, 1)
		ix.linked(r)
	}
	for k, js := range byKey {
		slices.SortFunc(js, byQueueOrder)
		set := &jobSet{n: len(js)}
		// Half-full chunks leave room to grow; each has its own capacity
		// so an insert into one never writes into the next.
		for len(js) > 0 {
			n := min(len(js), chunkMax/2)
			set.chunks = append(set.chunks, js[:n:n])
			js = js[n:]
		}
		ix.queued[k] = set
		for j := range set.all() {
			if j.sized() && !j.waitsPlaced() {
				ix.sizedSet(k).insert(j)
			}
			if k.queue == QueueHeld {
				// In queue order, so each insert appends.
				ix.heldSet(j.Team).insert(j)
			}
		}
	}
	ix.SetLaunches(s.Launches)
	return ix
}

// SetLaunches replaces the launch book.
func (ix *Index) SetLaunches(ls []Launch) { ix.launches = append(ix.launches[:0], ls...) }

// Len returns how many jobs and workers the index holds.
func (ix *Index) Len() (jobs, workers int) { return len(ix.jobs), len(ix.workers) }

// PutJob adds j or replaces the job with its ID. A job neither queued nor
// running is removed, as a snapshot leaves it out.
func (ix *Index) PutJob(j Job) {
	if !(j.queued() || j.running()) {
		ix.RemoveJob(j.ID)
		return
	}
	r := ix.jobs[j.ID]
	if r == nil {
		if n := len(ix.free); n > 0 {
			r, ix.free = ix.free[n-1], ix.free[:n-1]
		} else {
			r = &jobRec{}
		}
		ix.jobs[j.ID] = r
	} else {
		ix.unlink(r)
	}
	if r.own == nil {
		r.own = new(Job)
	}
	*r.own = j
	r.Job = r.own
	ix.link(r)
}

// RemoveJob removes the job with the ID, if it is there.
func (ix *Index) RemoveJob(id string) {
	r := ix.jobs[id]
	if r == nil {
		return
	}
	ix.unlink(r)
	delete(ix.jobs, id)
	*r = jobRec{own: r.own}
	ix.free = append(ix.free, r)
}

// PutWorker adds w or replaces the worker with its ID. A worker of a pool
// the index does not know is left out, with the jobs it runs.
func (ix *Index) PutWorker(w Worker) {
	pool := ix.pools[w.Pool]
	if old := ix.workers[w.ID]; old != nil {
		if pool != nil && old.Pool == w.Pool {
			// Counts kept per worker hold: only its own fields change.
			old.Worker = w
			return
		}
		ix.RemoveWorker(w.ID)
	}
	if pool == nil {
		return
	}
	wr := &workerRec{Worker: w, pool: pool, use: ix.use[w.ID]}
	ix.workers[w.ID] = wr
	ix.sorted = insertWorker(ix.sorted, wr)
	ix.byPool[w.Pool] = insertWorker(ix.byPool[w.Pool], wr)
	for r := range ix.orphans[w.ID] {
		ix.unlink(r)
		ix.link(r)
	}
}

// RemoveWorker removes the worker with the ID; its running jobs stay, out
// of Decide's sight, until they change or it comes back.
func (ix *Index) RemoveWorker(id string) {
	wr := ix.workers[id]
	if wr == nil {
		return
	}
	recs := slices.Clone(wr.recs)
	for _, r := range recs {
		ix.unlink(r)
	}
	delete(ix.workers, id)
	ix.sorted = deleteWorker(ix.sorted, wr)
	if ws := deleteWorker(ix.byPool[wr.Pool], wr); len(ws) > 0 {
		ix.byPool[wr.Pool] = ws
	} else {
		delete(ix.byPool, wr.Pool)
	}
	for _, r := range recs {
		ix.link(r) // now an orphan, until the worker comes back
	}
}

func byWorkerID(a, b *workerRec) int { return cmp.Compare(a.ID, b.ID) }

func insertWorker(ws []*workerRec, w *workerRec) []*workerRec {
	i, _ := slices.BinarySearchFunc(ws, w, byWorkerID)
	return slices.Insert(ws, i, w)
}

func deleteWorker(ws []*workerRec, w *workerRec) []*workerRec {
	if i, ok := slices.BinarySearchFunc(ws, w, byWorkerID); ok {
		return slices.Delete(ws, i, i+1)
	}
	return ws
}

// link files a job record whose fields are set: in its queue set or on its
// worker, and in the counts.
func (ix *Index) link(r *jobRec) {
	j := r.Job
	ix.hold(j, 1)
	if j.running() {
		w := ix.workers[j.Worker]
		if w == nil {
			os := ix.orphans[j.Worker]
			if os == nil {
				os = map[*jobRec]bool{}
				ix.orphans[j.Worker] = os
			}
			os[r] = true
			return
		}
		r.w, r.wpos = w, len(w.jobs)
		w.jobs, w.recs = append(w.jobs, j), append(w.recs, r)
	} else {
		k := queueKey{j.Queue, string(j.Class)}
		s := ix.queued[k]
		if s == nil {
			s = &jobSet{}
			ix.queued[k] = s
		}
		s.insert(j)
		if j.sized() && !j.waitsPlaced() {
			ix.sizedSet(k).insert(j)
		}
		if j.Queue == QueueHeld {
			ix.heldSet(j.Team).insert(j)
		}
	}
	ix.linked(r)
}

// heldSet returns the set of a team's held jobs, made if need be.
func (ix *Index) heldSet(team string) *jobSet {
	s := ix.held[team]
	if s == nil {
		s = &jobSet{}
		ix.held[team] = s
	}
	return s
}

// sizedSet returns the set of unplaced sized jobs of k, made if need be.
func (ix *Index) sizedSet(k queueKey) *jobSet {
	s := ix.sized[k]
	if s == nil {
		s = &jobSet{}
		ix.sized[k] = s
	}
	return s
}

// hold adds d times what j holds on its workers to their slot use: each
// member of a running job, or of a queued job already placed.
func (ix *Index) hold(j *Job, d int) {
	switch {
	case j.running() && len(j.Placed) == 0:
		ix.holdOn(j.Worker, j, d)
	case j.running() || j.waitsPlaced():
		for _, w := range j.Placed {
			ix.holdOn(w, j, d)
		}
	}
}

func (ix *Index) holdOn(id string, j *Job, d int) {
	u := ix.use[id]
	if u == nil {
		u = &slotUse{}
		ix.use[id] = u
		if w := ix.workers[id]; w != nil {
			w.use = u
		}
	}
	k := d * j.slots()
	if j.running() && j.Share > 0 {
		// Shares pack: kept in thousandths, turned into slots on read.
		m := int64(d * j.Share)
		u.shared += m
		if j.PendingAction == Reclaim {
			u.sharedReclaiming += m
		}
		if j.leaves() {
			u.sharedLeaving += m
		}
	} else {
		if j.running() {
			u.used += k
		} else {
			u.held += k
		}
		if j.running() && j.PendingAction == Reclaim {
			u.reclaiming += k
		}
		if j.running() && j.leaves() {
			u.leaving += k
		}
	}
	u.milliCPU += int64(d) * j.milliCPU()
	u.memory += int64(d) * max(j.Memory, 0)
	if *u == (slotUse{}) {
		delete(ix.use, id)
		if w := ix.workers[id]; w != nil {
			w.use = nil
		}
	}
}

// linked counts a job just filed by link.
func (ix *Index) linked(r *jobRec) {
	if !r.running() && ix.homeKnown(r.Job) {
		ix.knownHomes++
	}
	if r.waitsPlaced() {
		ix.placed[r] = true
	}
	r.shown = true
	ix.count(r, 1)
}

// unlink undoes link.
func (ix *Index) unlink(r *jobRec) {
	j := r.Job
	ix.hold(j, -1)
	if !r.shown {
		if os := ix.orphans[j.Worker]; os != nil {
			delete(os, r)
			if len(os) == 0 {
				delete(ix.orphans, j.Worker)
			}
		}
		return
	}
	ix.count(r, -1)
	r.shown = false
	if w := r.w; w != nil {
		last := len(w.jobs) - 1
		w.jobs[r.wpos], w.recs[r.wpos] = w.jobs[last], w.recs[last]
		w.recs[r.wpos].wpos = r.wpos
		w.jobs[last], w.recs[last] = nil, nil
		w.jobs, w.recs = w.jobs[:last], w.recs[:last]
		r.w = nil
		return
	}
	k := queueKey{j.Queue, string(j.Class)}
	if s := ix.queued[k]; s != nil {
		s.remove(j)
		if s.n == 0 {
			delete(ix.queued, k)
		}
	}
	if s := ix.sized[k]; s != nil && s.remove(j) && s.n == 0 {
		delete(ix.sized, k)
	}
	if s := ix.held[j.Team]; s != nil && j.Queue == QueueHeld && s.remove(j) && s.n == 0 {
		delete(ix.held, j.Team)
	}
	delete(ix.placed, r)
	if ix.homeKnown(j) {
		ix.knownHomes--
	}
}

// homeKnown reports whether rehome would look at the queued job.
func (ix *Index) homeKnown(j *Job) bool {
	return j.Class == jobs.ClassBurst && j.Queue == QueueBurst && j.Home.Known
}

// count adds d to the counts a shown job is in.
func (ix *Index) count(r *jobRec, d int) {
	j := r.Job
	// Counts are in slots. A placed job's slots are busy on its workers
	// already, so it is bound for no queue's count.
	n := d * j.weight()
	if j.waitsPlaced() {
		n = 0
	}
	if dest := j.destination(); n != 0 && (dest == QueueCore || dest == QueueLoan) {
		if ix.teamBound[j.Team] += int64(d) * j.milliSlots(); ix.teamBound[j.Team] == 0 {
			delete(ix.teamBound, j.Team)
		}
	}
	if j.Share > 0 && n != 0 {
		ix.countShare(j, int64(d*j.Share))
	} else {
		switch j.destination() {
		case QueueCore:
			ix.toCore += n
		case QueueLoan:
			ix.toLoan += n
		case QueueOverflow:
			// Sized overflowed work is counted as the workers it needs
			// (rule 8's binOverflow), not as slots.
			if !j.running() && n != 0 && !j.sized() {
				if ix.toOverflow[j.Pool] += n; ix.toOverflow[j.Pool] == 0 {
					delete(ix.toOverflow, j.Pool)
				}
			}
		}
	}
	if j.PendingAction != "" {
		if d > 0 {
			ix.redirected[r] = true
		} else {
			delete(ix.redirected, r)
		}
	}
}

// queue returns the chunks of one queue set, nil when it is empty.
func (ix *Index) queue(q Queue, class string) [][]*Job {
	if s := ix.queued[queueKey{q, class}]; s != nil {
		return s.chunks
	}
	return nil
}

// queues returns the chunks of every class's set of queue q, in class
// order so a merge of them does not depend on the map's order.
func (ix *Index) queues(q Queue) [][][]*Job {
	var keys []queueKey
	for k := range ix.queued {
		if k.queue == q {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b queueKey) int { return cmp.Compare(a.class, b.class) })
	out := make([][][]*Job, len(keys))
	for i, k := range keys {
		out[i] = ix.queued[k].chunks
	}
	return out
}

// Decide plans for the state in the index at now; see [Decide].
func (ix *Index) Decide(now time.Time) Plan { return decide(newView(ix, now)) }

// countShare adds m thousandths of a GPU to the count of shared jobs
// bound where j is.
func (ix *Index) countShare(j *Job, m int64) {
	switch j.destination() {
	case QueueCore:
		ix.coreShares += m
	case QueueLoan:
		ix.loanShares += m
	case QueueOverflow:
		// A sized share (one asking for CPUs, say) is counted as the
		// worker it needs, as other sized overflowed work is.
		if !j.running() && !j.sized() {
			if ix.overflowShares[j.Pool] += m; ix.overflowShares[j.Pool] == 0 {
				delete(ix.overflowShares, j.Pool)
			}
		}
	}
}

// queuedCore and queuedLoans are the slots bound for the quota's core
// and loan queues, the shares among them as the slots they fill.
func (ix *Index) queuedCore() int  { return ix.toCore + wholeOf(ix.coreShares) }
func (ix *Index) queuedLoans() int { return ix.toLoan + wholeOf(ix.loanShares) }

// coreCount and loanCount are queuedCore and queuedLoans before they
// are read as slots, for rules that move shares in and out of them.
func (ix *Index) coreCount() slotCount { return slotCount{whole: ix.toCore, milli: ix.coreShares} }
func (ix *Index) loanCount() slotCount { return slotCount{whole: ix.toLoan, milli: ix.loanShares} }

// wholeOf is the whole slots that thousandths of a GPU fill at the least.
func wholeOf(milli int64) int { return jobs.WholeGPUs(milli) }
