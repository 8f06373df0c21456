package advisor

import (
	"slices"
	"time"
)

// waitWindow is one sliding window of elastic waits and its p95.
type waitWindow struct {
	From, Until time.Time
	P95         time.Duration
	Jobs        int
}

// worstWindow finds the window of the given width whose p95 wait is
// highest; among equal p95s, the one with the most jobs, then the earliest.
//
// Windows start at a wait, [At, At+width), since every set of waits a
// window can hold is found among those. Only windows that take in a wait
// the previous one did not are weighed: a window whose waits all fit in an
// earlier window is that window cut short, and its p95, taken over fewer
// jobs, would drift to its largest wait. Without this the tail of every
// burst, one long wait alone, would be reported as the worst window.
func worstWindow(waits []Wait, width time.Duration) (waitWindow, bool) {
	if len(waits) == 0 || width <= 0 {
		return waitWindow{}, false
	}
	ws := slices.Clone(waits)
	slices.SortStableFunc(ws, func(a, b Wait) int { return a.At.Compare(b.At) })

	// in holds the current window's waits in ascending order, kept sorted
	// as the window slides, so each p95 is a lookup rather than a sort.
	var (
		in      []time.Duration
		out, hi int // ws[out:hi] is the current window
		best    waitWindow
		found   bool
	)
	for a := range ws {
		if a > 0 && ws[a].At.Equal(ws[a-1].At) {
			continue // the same window as the previous anchor
		}
		from := ws[a].At
		for ; ws[out].At.Before(from); out++ {
			i, _ := slices.BinarySearch(in, ws[out].Wait)
			in = slices.Delete(in, i, i+1)
		}
		until := from.Add(width)
		grew := false
		for ; hi < len(ws) && ws[hi].At.Before(until); hi++ {
			i, _ := slices.BinarySearch(in, ws[hi].Wait)
			in = slices.Insert(in, i, ws[hi].Wait)
			grew = true
		}
		if !grew {
			continue
		}
		c := waitWindow{From: from, Until: until, P95: P95(in), Jobs: len(in)}
		if !found || c.P95 > best.P95 || (c.P95 == best.P95 && c.Jobs > best.Jobs) {
			best, found = c, true
		}
	}
	return best, found
}

// P95 is the nearest-rank 95th percentile of ascending durations: the
// smallest of them that at least 95% do not exceed. Nearest rank rather
// than interpolation, so the figure is a wait some job had and can be
// checked by hand. Below 20 values it is the largest.
func P95(sorted []time.Duration) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (95*len(sorted) + 99) / 100 // ceil(0.95 n) in integers
	return sorted[rank-1]
}
