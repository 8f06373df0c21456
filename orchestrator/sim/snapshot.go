package sim

import (
	"time"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/policy"
)

var policyQueue = [...]policy.Queue{qCore: policy.QueueCore, qLoan: policy.QueueLoan, qBurst: policy.QueueBurst, qOverflow: policy.QueueOverflow}

var stopAction = [...]policy.ActionKind{stopReclaim: policy.Reclaim, stopMigrate: policy.Migrate}

// snapshot builds the policy's view of the model at now into slices reused
// from tick to tick, and sets the wake-up for the timers it sees (see
// timers.go). Decide does not keep or modify it.
func (s *sim) snapshot() policy.Snapshot {
	ws := s.snap.Workers[:0]
	for _, wi := range s.live {
		w := &s.workers[wi]
		p := &s.pools[w.pool]
		pw := policy.Worker{
			ID: w.id, Pool: p.Name, Slots: int(w.slots), Busy: int(w.busy), State: policy.WorkerUp,
			StartedAt: s.at(w.requested), LaunchRequestedAt: s.at(w.requested),
		}
		if w.state == wsDraining {
			pw.State = policy.WorkerDraining
		}
		if w.busy == 0 {
			pw.IdleSince = s.at(w.idleSince)
			if p.elastic && w.state == wsUp {
				s.wakeRelease(w, &p.Pool)
			}
		}
		ws = append(ws, pw)
	}

	// The job records are kept up to date as tasks change (see refresh);
	// only the checkpoints of running jobs move with time.
	for i, ti := range s.vis {
		t := &s.tasks[ti]
		switch {
		case t.state == tsRunning && t.ckpt:
			_, at := s.checkpoint(t)
			s.jobs[i].LastCheckpointAt = s.timeOrZero(at)
		case t.state == tsQueued && t.queue == qCore && s.cfg.CoreOverflow:
			s.wakeAt(t.queuedAt + s.coreMaxWait(t))
		}
	}

	ls := s.snap.Launches[:0]
	for _, li := range s.booting {
		l := &s.launches[li]
		ls = append(ls, policy.Launch{Pool: s.pools[l.pool].Name, Count: l.count, RequestedAt: s.at(l.requested)})
		if s.cfg.SpotFallbackAfter > 0 {
			s.wakeAt(l.requested + s.cfg.SpotFallbackAfter)
		}
	}

	s.snap = policy.Snapshot{Config: s.cfg, Pools: s.poolPolicy, Workers: ws, Jobs: s.jobs, Launches: ls}
	return s.snap
}

// policyJob is the policy's record of a task, but for the checkpoint of a
// running task, which snapshot fills in. Every trace job may be retried;
// region pins are not modelled.
func (s *sim) policyJob(t *task) policy.Job {
	j := policy.Job{
		ID: t.id, Class: jobs.ClassBurst, State: jobs.StateQueued, Queue: policyQueue[t.queue],
		Checkpointable: t.ckpt, Retryable: true, SpotPreemptions: int(t.spotHits),
		SubmittedAt: s.at(t.submit), QueuedAt: s.at(t.queuedAt),
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
		return j
	case tsLeaving:
		j.PendingAction = stopAction[t.stopped]
		j.LastCheckpointAt = s.timeOrZero(t.prevCkpt)
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
