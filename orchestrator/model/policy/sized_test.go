package policy

import (
	"math"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestPropertySizedPlans checks rule 8 and the slot counts over random
// snapshots with sizes: every Place is sound (checkPlacement), gangs go
// all at once into one region, lends stay under the high watermark in
// slots, and the plan is deterministic, order independent and idempotent.
func TestPropertySizedPlans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSizedSnapshot(t)
		p := Decide(s, t0)
		checkPlacement(t, s, p)

		shuffled := s
		shuffled.Workers = rapid.Permutation(s.Workers).Draw(t, "workers_order")
		shuffled.Jobs = rapid.Permutation(s.Jobs).Draw(t, "jobs_order")
		if other := Decide(shuffled, t0); !reflect.DeepEqual(p, other) {
			t.Fatalf("input order changed the plan:\n%s\n%s", p, other)
		}

		// Lends and migrations keep what is committed to fixed slots, once
		// the plan is in flight, under the high watermark. A reservation
		// commits no more than its worker's slots.
		applied := Apply(s, p, t0)
		if p.Count(Lend)+p.Count(Migrate) > 0 {
			load := committedLoad(applied)
			ceiling := int(math.Floor(s.Config.High*float64(load.Slots) + 1e-9))
			if load.Busy+load.QueuedCore+load.Loans > ceiling {
				t.Fatalf("plan commits %d+%d+%d fixed slots, more than high allows (%d)\n%s",
					load.Busy, load.QueuedCore, load.Loans, ceiling, p)
			}
		}

		if err := applied.Validate(); err != nil {
			t.Fatalf("Apply made an invalid snapshot: %v\n%s", err, p)
		}
		if next := Decide(applied, t0); !next.Empty() {
			t.Fatalf("not idempotent: after\n%s\nthe next plan is\n%s", p, next)
		}
	})
}

// TestPropertySizedIndexUpkeep builds an index of a sized snapshot by
// changes in a random order, with stale versions (placed and unplaced,
// wider and narrower) put first and workers that go and come back, and
// holds it against the rebuild: the same structures (Index.Check, which
// covers the slots held per worker and the sized sets), the same plan,
// and nothing left once everything is taken out.
func TestPropertySizedIndexUpkeep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSizedSnapshot(t)
		ix := NewIndex(s.Config, s.Pools)
		order := rapid.Permutation(seq(len(s.Jobs)+len(s.Workers))).Draw(t, "order")
		for n, i := range order {
			if i >= len(s.Jobs) {
				w := s.Workers[i-len(s.Jobs)]
				if rapid.Bool().Draw(t, "worker_away") {
					ix.PutWorker(w)
					ix.RemoveWorker(w.ID)
				}
				ix.PutWorker(w)
				continue
			}
			j := s.Jobs[i]
			if rapid.Bool().Draw(t, "stale") {
				old := j
				old.Slots = rapid.IntRange(0, 4).Draw(t, "stale_slots")
				old.Placed = nil
				if len(s.Workers) > 0 && old.queued() && old.PendingAction == "" && rapid.Bool().Draw(t, "stale_placed") {
					old.Placed = make([]string, max(old.Replicas, 1))
					for k := range old.Placed {
						old.Placed[k] = rapid.SampledFrom(s.Workers).Draw(t, "stale_worker").ID
					}
				}
				ix.PutJob(old)
			}
			ix.PutJob(j)
			if n%5 == 0 {
				if err := ix.Check(); err != nil {
					t.Fatalf("after %d changes: %v", n+1, err)
				}
			}
		}
		ix.SetLaunches(s.Launches)
		if err := ix.Check(); err != nil {
			t.Fatal(err)
		}
		if got, want := ix.Decide(t0), Decide(s, t0); !reflect.DeepEqual(got, want) {
			t.Fatalf("plans differ:\n got %s\nwant %s", got, want)
		}
		for _, j := range s.Jobs {
			ix.RemoveJob(j.ID)
		}
		for _, w := range s.Workers {
			ix.RemoveWorker(w.ID)
		}
		if len(ix.use) != 0 || len(ix.sized) != 0 || len(ix.placed) != 0 || ix.toCore != 0 || ix.toLoan != 0 {
			t.Fatalf("an emptied index still holds %+v", ix.state())
		}
	})
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// committedLoad is Load(s) with every take-back in flight counted as the
// rules count it (see unplace): its held fixed slots free, the job back
// in its queue. For whole jobs the sum is the same either way; a share
// packs with the others in its queue, so it may add no slot there.
func committedLoad(s Snapshot) FixedLoad {
	l := Load(s)
	ix := IndexOf(s)
	core, loans := ix.coreCount(), ix.loanCount()
	fixed := map[string]bool{}
	for _, w := range s.Workers {
		for _, p := range s.Pools {
			if p.Name == w.Pool && p.Kind == PoolFixed && w.State == WorkerUp {
				fixed[w.ID] = true
			}
		}
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.PendingAction != Unplace {
			continue
		}
		for _, id := range j.Placed {
			if fixed[id] {
				l.Busy -= j.slots()
			}
		}
		switch j.Queue {
		case QueueCore:
			core.add(j)
		case QueueLoan:
			loans.add(j)
		}
	}
	l.QueuedCore, l.Loans = core.slots(), loans.slots()
	return l
}
