package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// A class's waits are kept per pool and summarized by a merge walk: the
// figures must be those of the waits in one list, to the last bit of the
// mean, whatever the split (empty pools, one pool, ties across pools).
func TestPercentilesOfSplitWaits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for c := range 200 {
		sets := make([][]time.Duration, 1+r.IntN(5))
		var all []time.Duration
		for range r.IntN(300) {
			w := time.Duration(r.ExpFloat64() * float64(time.Minute))
			if c%3 == 0 {
				w = w.Round(10 * time.Second) // ties
			}
			i := r.IntN(len(sets))
			sets[i] = append(sets[i], w)
			all = append(all, w)
		}
		got, want := percentilesOf(sets), percentiles(slices.Clone(all))
		if got != want {
			t.Fatalf("case %d, %d waits in %d sets: got %+v, want %+v", c, len(all), len(sets), got, want)
		}
	}
}
