package policy

import (
	"slices"
	"time"
)

// Apply returns s as it stands once the controller has issued p at now and
// before anything has landed: moved jobs carry their PendingAction (and an
// overflowed job its target Pool, a job rebalancing stopped one more
// Rebalanced; a job whose placement is taken back keeps Placed as it
// was, with Unplace pending), placed jobs list their workers in
// Placed (placed at now), scale-ups are unfilled launches, drained
// workers are draining, released workers are gone. s is not modified.
//
// It is exported because it is the contract between Decide and whoever
// builds snapshots: Decide(Apply(s, Decide(s, now), now), now) plans
// nothing, so a controller that records in-flight moves this way (or a
// simulator that calls Apply between ticks) never issues a move twice.
// Completing the moves (checkpoints written, tasks requeued, workers
// registered) is the world's part, and lives in the controller or the
// simulator.
func Apply(s Snapshot, p Plan, now time.Time) Snapshot {
	out := s
	out.Pools = slices.Clone(s.Pools)
	out.Workers = slices.Clone(s.Workers)
	out.Jobs = slices.Clone(s.Jobs)
	out.Launches = slices.Clone(s.Launches)

	jobAt := make(map[string]int, len(out.Jobs))
	for i, j := range out.Jobs {
		if _, dup := jobAt[j.ID]; !dup {
			jobAt[j.ID] = i
		}
	}
	workerAt := make(map[string]int, len(out.Workers))
	for i, w := range out.Workers {
		if _, dup := workerAt[w.ID]; !dup {
			workerAt[w.ID] = i
		}
	}
	released := map[string]bool{}
	for _, a := range p.Actions {
		switch a.Kind {
		case Lend, Unlend, Reclaim, Migrate, Repack, Overflow, Rehome, Admit, Unplace:
			i, ok := jobAt[a.Job]
			if !ok {
				continue
			}
			out.Jobs[i].PendingAction = a.Kind
			if a.Rebalance {
				out.Jobs[i].Rebalanced++
			}
			if a.Kind == Overflow {
				out.Jobs[i].Pool = a.Pool
			}
		case Place:
			if i, ok := jobAt[a.Job]; ok {
				out.Jobs[i].Placed = slices.Clone(a.Workers)
				out.Jobs[i].PlacedAt = now
			}
		case ScaleUp:
			out.Launches = append(out.Launches, Launch{Pool: a.Pool, Count: a.Count, RequestedAt: now})
		case Drain:
			if i, ok := workerAt[a.Worker]; ok {
				out.Workers[i].State = WorkerDraining
			}
		case Release:
			released[a.Worker] = true
		}
	}
	if len(released) > 0 {
		out.Workers = slices.DeleteFunc(out.Workers, func(w Worker) bool { return released[w.ID] })
	}
	return out
}
