package controller

import (
	"context"
	"reflect"
	"slices"
	"time"

	"github.com/ballastdev/ballast/internal/timespan"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
)

// DefaultRebuildEvery is how often the leader reads every active job again
// by default. Each rebuild costs what every tick cost before the index was
// kept (about 150 ms of CPU for 12,000 jobs), so once every 30 ticks of a
// second; a change that no signal reported is seen at most this late.
const DefaultRebuildEvery = 30 * time.Second

// endMargin is how far before the latest attempt end read the next read
// of ended attempts starts: an end is stamped by the clock of the process
// that wrote it, and a worker's clock a little behind another's must not
// hide its ends. An end more than this behind is found by the next rebuild.
const endMargin = 5 * time.Second

// addMargin is how far before the latest addition to the active index
// read a tick reads additions again: a submission is stamped when its
// script is prepared, and may commit after a later one. One that commits
// later still makes the count fail to add up, and that tick reads the
// index whole; the margin only keeps that rare. A wide one costs a read
// of every ID submitted within it at every tick, which after a burst of
// ten thousand is most of a whole read.
const addMargin = time.Second

// liveState is the leader's view kept across ticks: the policy's index and
// the records it was built from (h.seen, h.attempts, which Apply fences
// on), brought up to date each tick by reading again only the records that
// may have changed. What may have changed is learned from signals, none of
// which is trusted to say more than "read this record again":
//
//   - the active index, the workers' claimed-job sets and the usage
//     entries of ended attempts (queues.Store.ActiveChanges), which the
//     store's scripts change in the same step as the record when a job is
//     created or ends, or an attempt starts, finishes or is requeued; a job
//     that enters or leaves one, or whose attempt ended, is read again.
//     Of the active index a tick reads only the IDs added since the last
//     (by their time of submission, with addMargin to spare) and its
//     count: an ended attempt that was its job's end says which ID left,
//     and so does a departure (a queued job's cancel, which ends no
//     attempt, or a cancel carried out by recovery). When the copy kept
//     then does not hold the count (an addition stamped before the
//     cursor, an end stamped by a clock further behind than endMargin),
//     that tick reads the index whole;
//   - the controller's own writes: every job an action of the plan names,
//     placements taken back, held deliveries moved;
//   - hints from outside (Changed), such as job events over NATS: the
//     only signal for a checkpoint's time, or a move made elsewhere.
//
// A change none of them reports (a record written by hand, a lost event, a
// claim by a worker that is not in the registry and was not at the last
// read) stays unseen until the next full rebuild, every RebuildEvery: that
// is the staleness a missed signal costs. Every action stays fenced on the
// attempt the plan saw, so a stale view makes a move fail, never land on
// the wrong attempt. A new leader, a Snapshot call, an error mid-refresh or
// a changed config or pool list starts from a rebuild.
type liveState struct {
	ix      *policy.Index
	cfg     policy.Config
	pools   []policy.Pool
	builtAt time.Time

	// active is the active index as last read, members its IDs marked
	// with the generation of the read that last saw them.
	active []string
	// activeOK says members are exactly active; false once additions
	// and removals were applied to them since (an empty index read whole
	// must not pass for the nil that no read left).
	activeOK bool
	members  map[string]uint32
	gen      uint32
	// sets are the claimed-job sets as last read, by worker.
	sets map[string][]string
	// endCursor is the latest attempt end read; endSeen the entries read
	// that ended within endMargin of it, which the next read asks for
	// again (see endMargin).
	endCursor time.Time
	endSeen   map[string]time.Time
	// addedCursor is the latest addition to the active index read; each
	// tick reads the additions since addMargin before it. wholeReads
	// counts the ticks that had to read the index whole.
	addedCursor time.Time
	wholeReads  int
	// refs are, by worker, the jobs whose record names it (as its worker
	// or as a placed member's): their view changes with the worker's
	// pool. Whether a worker takes placed work is the worker's view
	// (NoPlacedWork, draining), which rule 8 reads, not its jobs'.
	refs map[string]map[string]bool
	// workers is what each registered worker's jobs' view depends on, as
	// last read; indexed the IDs of the workers in ix.
	workers map[string]workerKey
	indexed map[string]bool
}

// workerKey is what of a worker its jobs' view depends on.
type workerKey struct {
	pool string
}

// Forget drops the view kept across ticks: the next Tick reads every
// active job. The controller calls it when it stops or starts leading,
// since another leader may have changed anything meanwhile.
func (h *Hybrid) Forget() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.live = nil
}

func (h *Hybrid) rebuildEvery() time.Duration {
	if h.RebuildEvery > 0 {
		return h.RebuildEvery
	}
	return DefaultRebuildEvery
}

// tickIndex returns the index Tick decides from, with the provider's
// instances it read: a rebuild when one is due, else the kept one with
// the changed records read again.
func (h *Hybrid) tickIndex(ctx context.Context, now time.Time) (*policy.Index, []provider.Instance, error) {
	h.init()
	hinted, flooded := h.hints.take()
	h.mu.Lock()
	lv := h.live
	h.mu.Unlock()
	if lv == nil || flooded || now.Sub(lv.builtAt) >= h.rebuildEvery() || now.Before(lv.builtAt) ||
		!reflect.DeepEqual(lv.cfg, h.Config) || !reflect.DeepEqual(lv.pools, h.Pools) {
		return h.rebuild(ctx, now)
	}
	ix, instances, err := h.refresh(ctx, now, lv, hinted)
	if err != nil {
		h.Forget() // what was read before the error is not trusted
	}
	return ix, instances, err
}

// rebuild reads everything, as Snapshot does, and keeps the result. The
// memberships are read before the records, so a change between the two
// reads shows as a change at the next tick.
func (h *Hybrid) rebuild(ctx context.Context, now time.Time) (*policy.Index, []provider.Instance, error) {
	ws, err := h.workerBook().Workers(ctx)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	m, err := h.Store.ActiveMembership(ctx, ids, time.Time{})
	if err != nil {
		return nil, nil, err
	}
	active, err := h.Store.ActiveJobs(ctx)
	if err != nil {
		return nil, nil, err
	}
	instances, err := h.instances(ctx, now)
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.build(ws, active, instances, now)
	lv := &liveState{ix: policy.IndexOf(s), cfg: h.Config, pools: slices.Clone(h.Pools), builtAt: now,
		members: make(map[string]uint32, len(m.Active)), sets: m.OnWorker, refs: map[string]map[string]bool{},
		workers: map[string]workerKey{}, indexed: map[string]bool{},
		endSeen: map[string]time.Time{}, endCursor: time.UnixMilli(1)}
	lv.syncMembers(m.Active)
	lv.addedCursor = timespan.Earlier(m.LastAdded, now.Add(addMargin))
	lv.syncEnded(m.Ended, now) // what ended before is in the records read after
	for _, j := range h.seen {
		lv.ref(j, true)
	}
	for _, w := range ws {
		lv.workers[w.ID] = keyOf(w)
		lv.indexed[w.ID] = true
	}
	h.live = lv
	return lv.ix, instances, nil
}

// instances lists the provider's instances for a tick, and first books
// those it reports stocked out, so the view built from them already falls
// back from their pools. Snapshot lists without booking: it changes
// nothing.
func (h *Hybrid) instances(ctx context.Context, now time.Time) ([]provider.Instance, error) {
	if h.Provider == nil {
		return nil, nil
	}
	insts, err := h.Provider.List(ctx)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.bookStockOutsLocked(insts, now)
	h.mu.Unlock()
	return insts, nil
}

func keyOf(w queues.WorkerInfo) workerKey {
	return workerKey{pool: w.Pool}
}

// refresh reads the registry, the memberships and the records that may have
// changed, and brings lv up to date.
func (h *Hybrid) refresh(ctx context.Context, now time.Time, lv *liveState, hinted map[string]bool) (*policy.Index, []provider.Instance, error) {
	ws, err := h.workerBook().Workers(ctx)
	if err != nil {
		return nil, nil, err
	}
	// The claimed sets of registered workers, of those read last time (a
	// worker that left the registry since may have claimed before it
	// left), and of the workers the kept records still run jobs on.
	registered := make(map[string]bool, len(ws))
	var ids []string
	for _, w := range ws {
		registered[w.ID] = true
		ids = append(ids, w.ID)
	}
	h.mu.Lock()
	gone := map[string]bool{}
	for w, js := range lv.sets {
		if _, was := lv.workers[w]; !registered[w] && (was || len(js) > 0) {
			gone[w] = true
		}
	}
	for w, js := range lv.refs {
		if !registered[w] && !gone[w] && h.runsOn(js, w) {
			gone[w] = true
		}
	}
	h.mu.Unlock()
	for w := range gone {
		ids = append(ids, w)
	}
	// The active index is read whole only when what changed in it does
	// not add up (see queues.Store.ActiveChanges).
	m, err := h.Store.ActiveChanges(ctx, ids, lv.endCursor.Add(-endMargin), lv.addedCursor.Add(-addMargin))
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	// A submitter whose clock runs ahead must not pin the cursor in the
	// future, where every other submitter's additions fall behind it.
	m.LastAdded = timespan.Earlier(m.LastAdded, now.Add(addMargin))
	added, removed, whole := lv.changes(m)
	if whole {
		lv.apply(added, removed, m.LastAdded)
	}
	h.mu.Unlock()
	if !whole {
		// The sets and ended attempts read stay: a change between the two
		// reads shows in the index now, or at the next tick.
		if m.Active, m.LastAdded, err = h.Store.ActiveIndex(ctx); err != nil {
			return nil, nil, err
		}
	}
	instances, err := h.instances(ctx, now)
	if err != nil {
		return nil, nil, err
	}

	h.mu.Lock()
	if !whole {
		lv.wholeReads++
		added, removed = lv.syncMembers(m.Active)
		lv.addedCursor = timespan.Earlier(m.LastAdded, now.Add(addMargin))
	}
	read := map[string]bool{}
	for _, id := range added {
		read[id] = true
	}
	for _, id := range lv.syncSets(m.OnWorker) {
		read[id] = true
	}
	for _, id := range lv.syncEnded(m.Ended, now) {
		if _, ok := lv.members[id]; ok {
			read[id] = true
		}
	}
	for id := range hinted {
		// Only what a full read would see: a hint cannot add a job
		// the active index does not hold.
		if _, ok := lv.members[id]; ok {
			read[id] = true
		}
	}
	for _, id := range removed {
		delete(read, id)
	}
	list := make([]string, 0, len(read))
	specs := make(map[string]jobs.Spec, len(read))
	for id := range read {
		list = append(list, id)
		if j, ok := h.seen[id]; ok {
			specs[id] = j.Spec
		}
	}
	h.mu.Unlock()
	recs, err := h.Store.ActiveJobsOf(ctx, list, func(id string) (jobs.Spec, bool) {
		sp, ok := specs[id]
		return sp, ok
	})
	if err != nil {
		return nil, nil, err
	}

	h.mu.Lock()
	if h.live != lv {
		// A Snapshot or Forget since the reads began: what they
		// replaced is not this view's to update.
		h.mu.Unlock()
		return h.rebuild(ctx, now)
	}
	defer h.mu.Unlock()
	poolOf := make(map[string]string, len(ws))
	for _, w := range ws {
		poolOf[w.ID] = w.Pool
	}
	for _, id := range removed {
		h.dropLive(lv, id)
	}
	for _, id := range list {
		if j, ok := recs[id]; ok {
			h.putLive(lv, j, poolOf)
		} else {
			h.dropLive(lv, id)
		}
	}
	// The jobs of workers that came, went, or changed pool are viewed
	// again from the records kept.
	again := map[string]bool{}
	for _, w := range ws {
		if k, ok := lv.workers[w.ID]; !ok || k != keyOf(w) {
			for id := range lv.refs[w.ID] {
				again[id] = true
			}
		}
	}
	for id := range lv.workers {
		if !registered[id] {
			for j := range lv.refs[id] {
				again[j] = true
			}
		}
	}
	for id := range again {
		if j, ok := h.seen[id]; ok && !read[id] {
			h.putLive(lv, j, poolOf)
		}
	}
	clear(lv.workers)
	for _, w := range ws {
		lv.workers[w.ID] = keyOf(w)
	}

	running := map[string]int{}
	for _, w := range ws {
		for id := range lv.refs[w.ID] {
			addRunning(running, h.seen[id], w.ID)
		}
	}
	workers, launches, _ := h.viewWorkers(ws, running, instances, now)
	for _, w := range workers {
		lv.ix.PutWorker(w)
	}
	for id := range lv.indexed {
		if !registered[id] {
			lv.ix.RemoveWorker(id)
			delete(lv.indexed, id)
		}
	}
	for _, w := range workers {
		lv.indexed[w.ID] = true
	}
	lv.ix.SetLaunches(launches)
	return lv.ix, instances, nil
}

// runsOn reports whether one of the jobs js runs on worker w by its
// record. Callers hold h.mu.
func (h *Hybrid) runsOn(js map[string]bool, w string) bool {
	for id := range js {
		run := map[string]int{}
		addRunning(run, h.seen[id], w)
		if run[w] > 0 {
			return true
		}
	}
	return false
}

// putLive replaces the record kept of j and its view in the index, as a
// full read would build them. Callers hold h.mu.
func (h *Hybrid) putLive(lv *liveState, j jobs.Job, poolOf map[string]string) {
	if old, ok := h.seen[j.ID]; ok {
		lv.ref(old, false)
	}
	h.seen[j.ID], h.attempts[j.ID] = j, j.Attempt
	lv.ref(j, true)
	if o, ok := h.overflowTo[j.ID]; ok && o.attempt != j.Attempt {
		delete(h.overflowTo, j.ID) // moved on from its overflow
	}
	lv.ix.PutJob(h.policyJob(j, poolOf))
}

// dropLive forgets an ended job. Callers hold h.mu.
func (h *Hybrid) dropLive(lv *liveState, id string) {
	if old, ok := h.seen[id]; ok {
		lv.ref(old, false)
	}
	delete(h.seen, id)
	delete(h.attempts, id)
	delete(h.inflight, id)
	delete(h.overflowTo, id)
	lv.ix.RemoveJob(id)
}

// ref files (add) or unfiles the record j under the workers it names.
func (lv *liveState) ref(j jobs.Job, add bool) {
	file := func(w string) {
		if w == "" {
			return
		}
		js := lv.refs[w]
		if add {
			if js == nil {
				js = map[string]bool{}
				lv.refs[w] = js
			}
			js[j.ID] = true
			return
		}
		delete(js, j.ID)
		if len(js) == 0 {
			delete(lv.refs, w)
		}
	}
	file(j.Worker)
	for _, w := range j.Placed {
		file(w)
	}
}

// changes takes what ActiveChanges read and returns the IDs that entered
// the active index since the last read (added at or after the cursor, and
// not held yet) and left it (their attempt's end was the job's), and
// whether the index then holds as many IDs as the read counted.
func (lv *liveState) changes(m queues.Membership) (added, removed []string, whole bool) {
	fresh := map[string]bool{}
	for _, id := range m.Active {
		if _, ok := lv.members[id]; !ok && !fresh[id] {
			fresh[id] = true
			added = append(added, id)
		}
	}
	gone := map[string]bool{}
	for _, e := range m.Ended {
		if _, seen := lv.endSeen[e.Key]; seen || !e.JobEnded() {
			continue // an entry read at an earlier tick was applied then
		}
		id := e.JobID()
		if gone[id] {
			continue
		}
		gone[id] = true
		if _, ok := lv.members[id]; ok {
			removed = append(removed, id)
		}
	}
	// One added and ended between two reads was never seen: nothing to do.
	added = slices.DeleteFunc(added, func(id string) bool { return gone[id] })
	return added, removed, len(lv.members)+len(added)-len(removed) == m.Count
}

// apply adds and removes IDs as changes found them.
func (lv *liveState) apply(added, removed []string, lastAdded time.Time) {
	for _, id := range added {
		lv.members[id] = lv.gen
	}
	for _, id := range removed {
		delete(lv.members, id)
	}
	lv.addedCursor = timespan.Later(lv.addedCursor, lastAdded)
	lv.activeOK = false // members are no longer the whole read kept in active
}

// syncMembers takes the active index as read now and returns the IDs that
// entered and left it since the last read.
func (lv *liveState) syncMembers(active []string) (added, removed []string) {
	if lv.activeOK && slices.Equal(active, lv.active) {
		return nil, nil
	}
	lv.gen++
	for _, id := range active {
		if _, ok := lv.members[id]; !ok {
			added = append(added, id)
		}
		lv.members[id] = lv.gen
	}
	if len(lv.members) != len(active) {
		for id, g := range lv.members {
			if g != lv.gen {
				removed = append(removed, id)
				delete(lv.members, id)
			}
		}
	}
	lv.active, lv.activeOK = active, true
	return added, removed
}

// syncSets takes the claimed-job sets as read now and returns the jobs
// that entered or left one since the last read.
func (lv *liveState) syncSets(sets map[string][]string) []string {
	var changed []string
	for w, now := range sets {
		before := lv.sets[w]
		if slices.Equal(now, before) {
			continue
		}
		was := make(map[string]bool, len(before))
		for _, id := range before {
			was[id] = true
		}
		for _, id := range now {
			if !was[id] {
				changed = append(changed, id)
			}
			delete(was, id)
		}
		for id := range was {
			changed = append(changed, id)
		}
	}
	for w, before := range lv.sets {
		if _, ok := sets[w]; !ok {
			changed = append(changed, before...)
		}
	}
	lv.sets = sets
	return changed
}

// syncEnded takes the ended attempts read now and returns the jobs of
// those not read before. The cursor goes no further than endMargin past
// the leader's clock: an end stamped by a clock far ahead (a departure is
// stamped by whoever cancels, an operator's machine too) must not hide
// every end after it.
func (lv *liveState) syncEnded(ended []queues.EndedAttempt, now time.Time) []string {
	var ids []string
	for _, e := range ended {
		if _, ok := lv.endSeen[e.Key]; ok {
			continue
		}
		lv.endSeen[e.Key] = e.End
		if id := e.JobID(); id != "" {
			ids = append(ids, id)
		}
		if e.End.After(lv.endCursor) {
			lv.endCursor = timespan.Earlier(e.End, now.Add(endMargin))
		}
	}
	for k, t := range lv.endSeen {
		if t.Before(lv.endCursor.Add(-endMargin)) {
			delete(lv.endSeen, k)
		}
	}
	return ids
}
