package sim

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

var policyQueue = [...]policy.Queue{qCore: policy.QueueCore, qLoan: policy.QueueLoan, qBurst: policy.QueueBurst,
	qOverflow: policy.QueueOverflow, qHeld: policy.QueueHeld}

var stopAction = [...]policy.ActionKind{stopReclaim: policy.Reclaim, stopMigrate: policy.Migrate, stopRepack: policy.Repack}

// The policy's view of the model is the index s.ix, kept up to date as
// tasks and workers change (refresh, workerChanged) and as checkpoints are
// written (evCheckpoint), so a tick costs what changed since the last one
// instead of a walk over everything in flight. snapshot is the full
// rebuild of the same state from the model, which the tests hold the index
// against.

// snapshot builds the policy's view of the model from scratch. The run
// itself never calls it.
func (s *sim) snapshot() policy.Snapshot {
	var snap policy.Snapshot
	snap.Config, snap.Pools = s.cfg, s.poolPolicy
	for _, wi := range s.live {
		snap.Workers = append(snap.Workers, s.policyWorker(&s.workers[wi]))
	}
	for i := range s.tasks {
		if t := &s.tasks[i]; s.visible(t) {
			snap.Jobs = append(snap.Jobs, s.policyJob(t))
		}
	}
	snap.Launches = s.launchBook()
	if s.teams != nil {
		snap.TeamUsage = s.teams.decay.Usage()
	}
	return snap
}

// launchBook lists the launches that have not booted.
func (s *sim) launchBook() []policy.Launch {
	ls := s.ls[:0]
	for _, li := range s.booting {
		l := &s.launches[li]
		ls = append(ls, policy.Launch{Pool: s.pools[l.pool].Name, Count: l.count, RequestedAt: s.at(l.requested)})
	}
	s.ls = ls
	return ls
}

// prepareTick brings the launch book of the index up to date and sets the
// wake-up for the timers the policy reads (see timers.go).
func (s *sim) prepareTick() {
	for _, wi := range s.idle {
		w := &s.workers[wi]
		s.wakeRelease(w, &s.pools[w.pool].Pool)
	}
	for _, wi := range s.live {
		// Rule 5 repacks a busy worker running jobs on at most half its
		// slots (shares at their share) once its timers allow; until then
		// only a change of the model could.
		w := &s.workers[wi]
		if p := &s.pools[w.pool]; p.elastic && w.state == wsUp && w.busy > 0 && s.mayRepack(w) {
			s.wakeRepack(w, &p.Pool)
		}
	}
	for len(s.coreDue.items) > 0 {
		e := s.coreDue.items[0]
		if t := &s.tasks[e.task]; t.gen == e.gen && t.state == tsQueued && (t.queue == qCore || t.queue == qHeld) && e.queuedAt > s.now {
			// The earliest threshold still ahead: later ones wake later.
			s.wakeAt(e.queuedAt)
			break
		}
		// Gone from the core queue, or past its threshold for good.
		s.coreDue.pop()
	}
	for len(s.youngHolds) > 0 {
		e := s.youngHolds[0]
		due := e.at + policy.ReservationPatience
		if t := &s.tasks[e.task]; t.state == tsQueued && t.placed >= 0 && t.placedAt == e.at && due > s.now {
			// The oldest placement still waiting to be movable.
			s.wakeAt(due)
			break
		}
		s.youngHolds = s.youngHolds[1:]
	}
	s.ix.SetLaunches(s.launchBook())
	if s.cfg.SpotFallbackAfter > 0 {
		for _, li := range s.booting {
			s.wakeAt(s.launches[li].requested + s.cfg.SpotFallbackAfter)
		}
	}
}

// policyWorker is the policy's record of a worker. It reports its pool's
// labels, as a live worker reports those of its config.
func (s *sim) policyWorker(w *worker) policy.Worker {
	p := &s.pools[w.pool]
	pw := policy.Worker{
		ID: w.id, Pool: p.Name, Slots: int(w.slots), Busy: int(w.busy), State: policy.WorkerUp, Labels: p.Labels,
		CPUs: p.CPUs, Memory: p.Memory,
		StartedAt: s.at(w.requested), LaunchRequestedAt: s.at(w.requested),
	}
	if w.state == wsDraining {
		pw.State = policy.WorkerDraining
	}
	if w.busy == 0 {
		pw.IdleSince = s.at(w.idleSince)
	}
	// What shares use of each GPU, as a GPU worker reports it. A new
	// slice each time: the index keeps the worker it is given.
	for _, used := range w.rooms {
		if used > 0 {
			pw.SharedGPUs = append(pw.SharedGPUs, int(used))
		}
	}
	return pw
}

// workerChanged brings the index's record of a live worker, and the list
// of idle elastic workers whose release timers wake the run, up to date.
func (s *sim) workerChanged(wi int32) {
	w := &s.workers[wi]
	if w.state == wsGone {
		return // a spot reclaim's tasks leave a worker already gone
	}
	s.ix.PutWorker(s.policyWorker(w))
	s.noteUnused(w)
	idle := w.busy == 0 && w.state == wsUp && s.pools[w.pool].elastic
	switch {
	case idle && w.ipos < 0:
		w.ipos = int32(len(s.idle))
		s.idle = append(s.idle, wi)
	case !idle && w.ipos >= 0:
		s.dropIdle(w)
	}
}

// dropIdle takes a worker off the idle list.
func (s *sim) dropIdle(w *worker) {
	n := len(s.idle) - 1
	last := s.idle[n]
	s.idle[w.ipos] = last
	s.workers[last].ipos = w.ipos
	s.idle = s.idle[:n]
	w.ipos = -1
}

// continuousCheckpoint stands for "checkpointed this instant" in a running
// job's record when checkpoints are continuous (CheckpointInterval 0): a
// stop then loses nothing, and a time after every tick says so without
// rewriting every running job's record on every tick.
var continuousCheckpoint = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// policyJob is the policy's record of a task at now, with the labels its
// trace job requires. Every trace job may be retried; region pins, CPUs
// and memory are not modelled.
func (s *sim) policyJob(t *task) policy.Job {
	j := policy.Job{
		ID: t.id, Class: jobs.ClassBurst, State: jobs.StateQueued, Queue: policyQueue[t.queue],
		Checkpointable: t.ckpt, Retryable: true, SpotPreemptions: int(t.spotHits),
		SubmittedAt: s.at(t.submit), QueuedAt: s.at(t.queuedAt), Readmitted: t.readmitted, Requires: t.req, Share: int(t.share),
		CPUs: t.cpus, Memory: t.mem, Team: t.team, Grace: t.grace, Rebalanced: int(t.rebalanced),
	}
	if t.sized() {
		j.Slots = int(t.slots)
	}
	if t.gang() {
		j.Replicas = int(t.replicas)
		if len(t.members) > 0 {
			j.Placed = make([]string, len(t.members))
			for i, wi := range t.members {
				j.Placed[i] = s.workers[wi].id
			}
		}
	}
	if t.core {
		j.Class = jobs.ClassCore
		j.MaxWait, j.HasMaxWait = s.ownMaxWait(t)
	}
	switch t.state {
	case tsQueued:
		if t.queue == qOverflow {
			j.Pool = s.pools[t.ovPool].Name
		}
		if t.placed >= 0 && !t.gang() {
			j.Placed = []string{s.workers[t.placed].id}
		}
		if t.placed >= 0 {
			j.PlacedAt = s.at(t.placedAt)
		}
		return j
	case tsLeaving:
		j.PendingAction = stopAction[t.stopped]
		j.LastCheckpointAt = s.timeOrZero(t.prevCkpt)
	case tsRunning:
		switch {
		case t.ckpt && s.ckptEvery == 0:
			j.LastCheckpointAt = continuousCheckpoint
		case t.ckpt:
			_, at := s.checkpoint(t)
			j.LastCheckpointAt = s.timeOrZero(at)
		}
	}
	w := &s.workers[t.worker]
	j.State, j.Worker, j.Pool, j.StartedAt = jobs.StateRunning, w.id, s.pools[w.pool].Name, s.at(t.startedAt)
	return j
}

// coreMaxWait is how long core task t may wait before rule 7: its own
// wait (ownMaxWait), else the global one.
func (s *sim) coreMaxWait(t *task) time.Duration {
	if d, ok := s.ownMaxWait(t); ok {
		return d
	}
	return s.cfg.CoreMaxWait
}

// ownMaxWait is core task t's own wait before rule 7, as the live
// controller gives a job one (jobs.Spec.OwnMaxWait): its template's
// core_max_wait in place of the global, and for a job with a deadline no
// later than its latest start (the deadline less its duration, which the
// model knows where live uses the p90 of past runs, less the lead on-demand
// capacity takes to start). A deadline only ever makes it sooner.
func (s *sim) ownMaxWait(t *task) (time.Duration, bool) {
	wait, has := s.waitByTmpl[s.st.templates[t.tmpl].name]
	if !has {
		wait = s.cfg.CoreMaxWait
	}
	if j := &s.tr.Jobs[t.job]; j.Deadline > 0 {
		latest := j.Submit + j.Deadline - j.Duration - s.overflowLead
		wait, has = min(wait, max(latest-t.queuedAt, 0)), true
	}
	return wait, has
}

// timeOrZero maps "none" (-1) to the policy's zero time.
func (s *sim) timeOrZero(d time.Duration) time.Time {
	if d < 0 {
		return time.Time{}
	}
	return s.at(d)
}

// mayRepack reports whether rule 5 may repack w's tasks once its timers
// allow: they hold at most half its slots (shares at their share), or
// are all shares, which may fit the room beside other workers' shares.
func (s *sim) mayRepack(w *worker) bool {
	load, shares := int64(0), true
	for _, ti := range w.tasks {
		t := &s.tasks[ti]
		if t.share > 0 {
			load += int64(t.share)
		} else {
			load += 1000 * int64(t.slots)
			shares = false
		}
	}
	return shares || 2*load <= 1000*int64(w.slots)
}
