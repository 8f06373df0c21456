package sim

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/policy"
)

// invariants checks the model before every Decide: the snapshot passes the
// policy's own validation, the bookkeeping agrees with itself, and no free
// slot is left beside queued work it may take.
func invariants(s *sim, snap policy.Snapshot) error {
	if err := snap.Validate(); err != nil {
		return err
	}
	free := make([]int, len(s.pools))
	for _, wi := range s.live {
		w := &s.workers[wi]
		if int(w.busy) != len(w.tasks) || w.busy > w.slots || w.busy < 0 {
			return fmt.Errorf("worker %s: busy %d with %d tasks of %d slots", w.id, w.busy, len(w.tasks), w.slots)
		}
		if w.state != wsUp {
			continue
		}
		free[w.pool] += int(w.slots - w.busy)
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
	if len(s.vis) != len(s.jobs) {
		return errors.New("visible list and job records differ in length")
	}
	running := 0
	for i := range s.tasks {
		t := &s.tasks[i]
		if t.state == tsRunning || t.state == tsLeaving {
			running++
		}
		if s.visible(t) != (t.pos >= 0) || (t.pos >= 0 && s.jobs[t.pos].ID != t.id) {
			return fmt.Errorf("job %s (state %d) is shown wrongly", t.id, t.state)
		}
	}
	busy := 0
	for _, wi := range s.live {
		busy += int(s.workers[wi].busy)
	}
	if busy != running {
		return fmt.Errorf("%d running jobs on %d busy slots", running, busy)
	}
	return nil
}

func TestModelStaysConsistent(t *testing.T) {
	tr := benchTrace(4000, 1, 5*time.Minute, 13)
	overflow := busyOptions()
	overflow.FixedSlots = 10
	overhead := benchOptions()
	overhead.FixedSlots, overhead.CheckpointOverhead, overhead.CheckpointInterval = 12, 2*time.Minute, 0
	for name, o := range map[string]Options{"busy": busyOptions(), "overflow": overflow, "overhead": overhead, "elastic": AllElastic(busyOptions())} {
		t.Run(name, func(t *testing.T) {
			s, err := newSim(tr, o)
			if err != nil {
				t.Fatal(err)
			}
			s.check = invariants
			if err := s.run(); err != nil {
				t.Fatal(err)
			}
			if r := s.result(); r.Jobs != len(tr.Jobs) || r.Decisions == 0 {
				t.Errorf("%d of %d jobs finished after %d decisions", r.Jobs, len(tr.Jobs), r.Decisions)
			}
		})
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
