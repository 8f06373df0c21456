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
			load := Load(applied)
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
