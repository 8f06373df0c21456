package sim

import (
	"errors"
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// carryOut does one action of a plan to the model, as the controller and
// the world would, and writes into the model what policy.Apply records in a
// snapshot: a stop in flight is the task's pending action (until it lands
// after CheckpointOverhead), a scale-up a launch in the book, a drained
// worker draining, a released one gone. Moves between queues (lend, unlend,
// overflow) land at once, as a Redis move does; the next Decide sees them
// landed, which it counts the same way as in flight.
//
// An action the model cannot do is an error: the policy promised never to
// plan it, so either it or the model has a bug, and a simulation that
// skipped it would measure something else.
func (s *sim) carryOut(a policy.Action) error {
	switch a.Kind {
	case policy.Lend, policy.Unlend, policy.Overflow:
		ti, err := s.queuedTask(a.Job)
		if err != nil {
			return err
		}
		t := &s.tasks[ti]
		switch {
		case a.Kind == policy.Lend && t.queue == qBurst && !t.core:
			s.move(ti, qLoan)
		case a.Kind == policy.Unlend && t.queue == qLoan:
			s.move(ti, qBurst)
		case a.Kind == policy.Overflow && (t.queue == qCore || t.queue == qHeld) && t.core:
			pi, ok := s.poolByName[a.Pool]
			if !ok || s.pools[pi].Kind != policy.PoolOnDemand {
				return fmt.Errorf("pool %q is not an on-demand pool", a.Pool)
			}
			t.ovPool = pi
			s.move(ti, qOverflow)
		default:
			return fmt.Errorf("job %s waits in %s", a.Job, policyQueue[t.queue])
		}

	case policy.Reclaim, policy.Migrate, policy.Repack:
		ti := parseID('j', a.Job)
		if ti < 0 || int(ti) >= len(s.tasks) || s.tasks[ti].state != tsRunning {
			return errors.New("no such running job")
		}
		t := &s.tasks[ti]
		kind := s.pools[s.workers[t.worker].pool].Kind
		if a.Kind == policy.Reclaim {
			if kind != policy.PoolFixed || (t.core && s.teams == nil) {
				return errors.New("only burst jobs on fixed quota are reclaimed")
			}
			dest := qBurst
			if t.core {
				// Under team shares a core loan goes back to wait for
				// rule 9, readmitted, so it is first in line.
				dest = qHeld
			}
			if s.teams != nil {
				s.teams.reclaimed(t, a)
			}
			s.stop(ti, stopReclaim, dest)
			return nil
		}
		if !t.ckpt || !kind.Elastic() {
			return errors.New("only checkpointable jobs on elastic workers migrate")
		}
		if a.Kind == policy.Repack {
			if t.core {
				return errors.New("only burst jobs are repacked")
			}
			s.stop(ti, stopRepack, qBurst)
			return nil
		}
		dest := qLoan
		switch {
		case t.core && s.teams != nil && a.Queue == policy.QueueHeld:
			// Under team shares the policy may send it back through
			// admission.
			dest = qHeld
		case t.core:
			dest = qCore
		}
		s.stop(ti, stopMigrate, dest)

	case policy.Admit:
		ti, err := s.queuedTask(a.Job)
		if err != nil {
			return err
		}
		if t := &s.tasks[ti]; s.teams == nil || !t.core || t.queue != qHeld {
			return fmt.Errorf("job %s waits in %s, not held under team shares", a.Job, policyQueue[t.queue])
		}
		s.move(ti, qCore)

	case policy.Rehome:
		// The model has one burst queue, not the controller's four forms
		// of it: its spot workers skip work that is not spot-eligible
		// themselves, and jobs are not pinned to regions, so every queued
		// burst task is already where its workers look. Its snapshot
		// leaves Job.Home unknown and the policy plans no rehome; one
		// planned anyway is accepted as the no-op it is here, but only for
		// a queued burst task.
		ti, err := s.queuedTask(a.Job)
		if err != nil {
			return err
		}
		if t := &s.tasks[ti]; t.core || t.queue != qBurst {
			return fmt.Errorf("job %s waits in %s, not in burst", a.Job, policyQueue[t.queue])
		}

	case policy.Place:
		// Rule 8 names the worker of each member: a sized job of one
		// member holds its slots on one worker, a gang its members' on
		// each named worker (a worker named twice holds both).
		ti, err := s.queuedTask(a.Job)
		if err != nil {
			return err
		}
		t := &s.tasks[ti]
		if !t.sized() || len(a.Workers) != int(t.replicas) {
			return fmt.Errorf("job %s is not a sized job of %d members waiting for a place", a.Job, t.replicas)
		}
		ws := make([]int32, len(a.Workers))
		for i, id := range a.Workers {
			wi := parseID('w', id)
			// A dead worker not yet declared dead is up to the policy.
			if wi < 0 || int(wi) >= len(s.workers) || (s.workers[wi].state != wsUp && s.workers[wi].state != wsDead) {
				return fmt.Errorf("worker %s is not up", id)
			}
			ws[i] = wi
		}
		for _, wi := range ws {
			k := int32(0)
			for _, wj := range ws {
				if wj == wi {
					k += t.slots
				}
			}
			if s.workers[wi].slots < k {
				return fmt.Errorf("worker %s has not %d slots", s.workers[wi].id, k)
			}
			if p := &s.pools[s.workers[wi].pool]; !carries(p.Labels, t.req) {
				return fmt.Errorf("worker %s of pool %s lacks the labels %v the job requires", s.workers[wi].id, p.Name, t.req)
			}
		}
		if t.placed >= 0 {
			// A reservation moves: the old workers stop holding it.
			s.unholdTask(ti)
		}
		if t.gang() {
			s.holdGang(ti, ws)
		} else {
			s.hold(ti, ws[0])
		}
		s.unplaced = append(s.unplaced, ti)

	case policy.Unplace:
		// Rule 8 takes back a placement its workers will never start.
		// The model unholds a draining or dying worker's placements as
		// it drains or dies, so the policy should never see one; the
		// take-back is carried out all the same, as the controller's
		// fenced move would.
		ti, err := s.queuedTask(a.Job)
		if err != nil {
			return err
		}
		if s.tasks[ti].placed < 0 {
			return fmt.Errorf("job %s is not placed", a.Job)
		}
		s.unholdTask(ti)

	case policy.ScaleUp:
		pi, ok := s.poolByName[a.Pool]
		if !ok || !s.pools[pi].elastic || a.Count <= 0 {
			return errors.New("no elastic pool or no count")
		}
		s.scaleUp(pi, a.Count)

	case policy.Drain, policy.Release:
		wi := parseID('w', a.Worker)
		if wi < 0 || int(wi) >= len(s.workers) || s.workers[wi].state == wsGone || !s.pools[s.workers[wi].pool].elastic {
			return errors.New("no such elastic worker")
		}
		w := &s.workers[wi]
		if a.Kind == policy.Drain {
			if w.state != wsUp {
				return errors.New("worker is not up")
			}
			s.drain(wi)
			return nil
		}
		if w.busy != 0 {
			return fmt.Errorf("worker runs %d jobs", w.busy)
		}
		s.retire(wi)

	default:
		return fmt.Errorf("unknown action kind %q", a.Kind)
	}
	return nil
}

// queuedTask resolves a job ID to a queued task.
func (s *sim) queuedTask(id string) (int32, error) {
	ti := parseID('j', id)
	if ti < 0 || int(ti) >= len(s.tasks) || s.tasks[ti].state != tsQueued {
		return 0, fmt.Errorf("no queued job %s", id)
	}
	return ti, nil
}
