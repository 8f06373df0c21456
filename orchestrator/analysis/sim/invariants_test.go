package sim

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// invariants checks the model before every Decide: the snapshot passes the
// policy's own validation, the bookkeeping agrees with itself, no worker
// holds more than its slots or runs a job whose labels it lacks, and no
// free slot is left beside queued work it may take (or beside the sized
// job placed there, once it fits).
func invariants(s *sim, snap policy.Snapshot) error {
	if err := snap.Validate(); err != nil {
		return err
	}
	free := make([]int, len(s.pools))
	for _, wi := range s.live {
		w := &s.workers[wi]
		held := int32(0)
		shared := make([]int16, len(w.rooms))
		for _, ti := range w.tasks {
			if t := &s.tasks[ti]; t.share > 0 {
				shared[t.room] += t.share
			} else {
				held += t.slotsOn(wi)
			}
			if p := &s.pools[w.pool]; !carries(p.Labels, s.tasks[ti].req) {
				return fmt.Errorf("job %s requires %v and runs on worker %s of pool %s, labelled %v", s.tasks[ti].id, s.tasks[ti].req, w.id, p.Name, p.Labels)
			}
		}
		// A slot that jobs share is one busy slot, holding at most one
		// GPU's worth.
		for i, used := range shared {
			if used != w.rooms[i] || used > 1000 {
				return fmt.Errorf("worker %s: shared slot %d holds %d thousandths, its jobs %d", w.id, i, w.rooms[i], used)
			}
			if used > 0 {
				held++
			}
		}
		if held != w.busy || w.busy > w.slots || w.busy < 0 {
			return fmt.Errorf("worker %s: busy %d with tasks of %d slots, of %d slots", w.id, w.busy, held, w.slots)
		}
		if w.state != wsUp {
			// A dead worker not yet declared dead is up to the policy,
			// which may place work on it.
			if w.state != wsDead && len(w.holds) > 0 {
				return fmt.Errorf("worker %s takes no work but holds %d placed jobs", w.id, len(w.holds))
			}
			continue
		}
		free[w.pool] += int(w.slots - w.busy)
		if len(w.holds) > 0 {
			if h := &s.tasks[w.holds[0]]; h.gang() {
				if h.state != tsQueued || h.slotsOn(wi) == 0 || s.gangReady(w.holds[0]) {
					return fmt.Errorf("worker %s: placed gang %s waits though ready, or is not placed here", w.id, h.id)
				}
			} else if h.slots <= w.slots-w.busy || h.placed != wi || h.state != tsQueued {
				return fmt.Errorf("worker %s: placed job %s of %d slots waits with %d free", w.id, h.id, h.slots, w.slots-w.busy)
			}
			continue // a reservation: it takes nothing else
		}
		if w.busy == w.slots {
			continue
		}
		if ti, ok := s.nextFor(w); ok {
			return fmt.Errorf("worker %s has a free slot and job %s waits for it", w.id, s.tasks[ti].id)
		}
	}
	for i := range s.pools {
		if free[i] != s.pools[i].free {
			return fmt.Errorf("pool %s counts %d free slots, has %d", s.pools[i].Name, s.pools[i].free, free[i])
		}
	}
	// The index kept up by events must hold what a rebuild from the model
	// holds, and its own structures must match a rebuild from its records.
	if err := sameState(s.ix.Snapshot(), canonical(snap)); err != nil {
		return fmt.Errorf("the policy's index differs from the model: %w", err)
	}
	if err := s.ix.Check(); err != nil {
		return err
	}
	running := 0
	on := make([]int, len(s.tasks))
	for _, wi := range s.live {
		for _, ti := range s.workers[wi].tasks {
			on[ti]++
		}
	}
	for i := range s.tasks {
		t := &s.tasks[i]
		if (t.state == tsRunning || t.state == tsLeaving) && t.share == 0 {
			running += int(t.total())
		}
		if err := s.gangWhole(t, on[i]); err != nil {
			return err
		}
		if s.visible(t) != t.shown {
			return fmt.Errorf("job %s (state %d) is shown wrongly", t.id, t.state)
		}
	}
	busy := 0
	for _, wi := range s.live {
		busy += int(s.workers[wi].busy)
		for _, used := range s.workers[wi].rooms {
			if used > 0 {
				running++ // a shared slot, busy whatever shares it
			}
		}
	}
	if busy != running {
		return fmt.Errorf("%d running jobs on %d busy slots", running, busy)
	}
	return nil
}

// gangWhole checks that a gang is all or nothing: running (or winding
// down) on every member's worker with its members' slots, or queued on
// none, and placed either on all its members' workers or not at all.
func (s *sim) gangWhole(t *task, on int) error {
	ti := parseID('j', t.id)
	if !t.gang() {
		if running := t.state == tsRunning || t.state == tsLeaving; running && on != 1 || !running && on != 0 {
			return fmt.Errorf("job %s (state %d) is on %d workers", t.id, t.state, on)
		}
		return nil
	}
	switch t.state {
	case tsRunning, tsLeaving:
		if len(t.members) != int(t.replicas) || on != len(t.gws) {
			return fmt.Errorf("gang %s runs %d members on %d of its %d workers", t.id, len(t.members), on, len(t.gws))
		}
		for i, wi := range t.gws {
			if w := &s.workers[wi]; w.tasks[t.gpos[i]] != ti {
				return fmt.Errorf("gang %s lost its place on worker %s", t.id, w.id)
			}
			k := int32(0)
			for _, m := range t.members {
				if m == wi {
					k += t.slots
				}
			}
			if k != t.gk[i] {
				return fmt.Errorf("gang %s holds %d slots on worker %s, want %d", t.id, t.gk[i], s.workers[wi].id, k)
			}
		}
	case tsQueued:
		if on != 0 {
			return fmt.Errorf("queued gang %s has members on %d workers", t.id, on)
		}
		if len(t.members) != 0 && len(t.members) != int(t.replicas) {
			return fmt.Errorf("gang %s is placed with %d of %d members", t.id, len(t.members), t.replicas)
		}
		for _, wi := range t.gws {
			if !slices.Contains(s.workers[wi].holds, ti) {
				return fmt.Errorf("placed gang %s is not held by worker %s", t.id, s.workers[wi].id)
			}
		}
	}
	return nil
}

// sameState says where two canonical snapshots first differ.
func sameState(got, want policy.Snapshot) error {
	if len(got.Workers) != len(want.Workers) || len(got.Jobs) != len(want.Jobs) {
		return fmt.Errorf("%d workers and %d jobs, want %d and %d", len(got.Workers), len(got.Jobs), len(want.Workers), len(want.Jobs))
	}
	for i := range got.Workers {
		if !reflect.DeepEqual(got.Workers[i], want.Workers[i]) {
			return fmt.Errorf("worker\n got %+v\nwant %+v", got.Workers[i], want.Workers[i])
		}
	}
	for i := range got.Jobs {
		if !reflect.DeepEqual(got.Jobs[i], want.Jobs[i]) {
			return fmt.Errorf("job\n got %+v\nwant %+v", got.Jobs[i], want.Jobs[i])
		}
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("config, pools or launches: got %+v, want %+v", got, want)
	}
	return nil
}

// canonical orders a snapshot's workers and jobs by ID, as
// policy.Index.Snapshot does.
func canonical(snap policy.Snapshot) policy.Snapshot {
	snap.Pools = slices.Clone(snap.Pools)
	snap.Launches = slices.Clone(snap.Launches)
	snap.Workers = slices.SortedFunc(slices.Values(snap.Workers), func(a, b policy.Worker) int { return cmp.Compare(a.ID, b.ID) })
	snap.Jobs = slices.SortedFunc(slices.Values(snap.Jobs), func(a, b policy.Job) int { return cmp.Compare(a.ID, b.ID) })
	return snap
}

// TestModelStaysConsistent runs a busy trace through every kind of move
// with the invariants checked before every Decide, once as it is and once
// with a third of the one-slot jobs of a shorter one sharing a GPU.
func TestModelStaysConsistent(t *testing.T) {
	skipUnderRace(t)
	plain := benchTrace(4000, 1, 5*time.Minute, 13)
	// The shared run checks what shares add; a shorter trace does that
	// and keeps the run short.
	shared := benchTrace(1500, 1, 5*time.Minute, 17)
	for i := range shared.Jobs {
		if j := &shared.Jobs[i]; i%3 == 0 && j.Slots == 1 && j.Members() == 1 {
			j.Share = 100 + 7*i%850
		}
	}
	overflow := busyOptions()
	overflow.FixedSlots = 10
	overhead := benchOptions()
	overhead.FixedSlots, overhead.CheckpointOverhead, overhead.CheckpointInterval = 12, 2*time.Minute, 0
	for tn, tr := range map[string]trace.Trace{"whole": plain, "shares": shared} {
		for name, o := range map[string]Options{"busy": busyOptions(), "overflow": overflow, "overhead": overhead, "elastic": AllElastic(busyOptions())} {
			t.Run(tn+"/"+name, func(t *testing.T) {
				if r := runChecked(t, tr, o); r.Jobs != len(tr.Jobs) || r.Decisions == 0 {
					t.Errorf("%d of %d jobs finished after %d decisions", r.Jobs, len(tr.Jobs), r.Decisions)
				}
			})
		}
	}
}

// The checker itself must catch a broken model.
func TestInvariantsCatchABrokenModel(t *testing.T) {
	tr := benchTrace(500, 1, 5*time.Minute, 13)
	s, err := newSim(tr, busyOptions())
	if err != nil {
		t.Fatal(err)
	}
	s.check = func(s *sim, snap policy.Snapshot) error {
		if s.now > 6*time.Hour && s.fixed >= 0 {
			s.pools[s.workers[s.fixed].pool].free++ // a slot counted twice
		}
		return invariants(s, snap)
	}
	if err := s.run(); err == nil {
		t.Fatal("a miscounted slot went unnoticed")
	}
}
