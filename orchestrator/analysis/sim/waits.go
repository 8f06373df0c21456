package sim

import (
	"slices"
	"time"
)

// poolWaits are the waits (submit to start) of the jobs whose run first
// started on one pool's workers, by class. They are the only record of
// waits: a class's over the run is the union of every pool's, so a
// flavor's waits cost no second copy of a million durations.
type poolWaits struct {
	core, burst []time.Duration
}

func (w *poolWaits) add(core bool, wait time.Duration) {
	if core {
		w.core = append(w.core, wait)
	} else {
		w.burst = append(w.burst, wait)
	}
}

// classWaits summarizes the waits of core and of burst jobs over every
// pool.
func (s *sim) classWaits() (core, burst Percentiles) {
	cs := make([][]time.Duration, len(s.pools))
	bs := make([][]time.Duration, len(s.pools))
	for i := range s.pools {
		cs[i], bs[i] = s.pools[i].waits.core, s.pools[i].waits.burst
	}
	return percentilesOf(cs), percentilesOf(bs)
}

// waitStats summarizes one pool's share of a class's waits. It sorts ws.
func waitStats(ws []time.Duration) WaitStats {
	p := percentiles(ws)
	return WaitStats{N: p.N, P95: p.P95}
}

// percentiles summarizes waits by the nearest-rank method. It sorts ws.
func percentiles(ws []time.Duration) Percentiles {
	n := len(ws)
	if n == 0 {
		return Percentiles{}
	}
	slices.Sort(ws)
	var sum float64
	for _, w := range ws {
		sum += float64(w)
	}
	return Percentiles{
		N: n, P50: ws[rank(0.50, n)], P95: ws[rank(0.95, n)], P99: ws[rank(0.99, n)], Max: ws[n-1],
		Mean: time.Duration(sum / float64(n)),
	}
}

// rank is the index of the p-th percentile of n sorted values, nearest
// rank.
func rank(p float64, n int) int {
	i := int(p*float64(n)+0.999999999) - 1
	return min(max(i, 0), n-1)
}

// percentilesOf is percentiles of the concatenation of sets, without
// making it. It sorts each set and walks them merged, so it meets the
// waits in the order percentiles would, ranks and the mean's float sum
// included: the same figures to the last bit. A walk costs a look at
// each set per wait, and there are as many sets as pools.
func percentilesOf(sets [][]time.Duration) Percentiles {
	n, last := 0, -1
	for i, ws := range sets {
		slices.Sort(ws)
		if len(ws) > 0 {
			n += len(ws)
			last = i
		}
	}
	if n == 0 {
		return Percentiles{}
	}
	if len(sets[last]) == n {
		return percentiles(sets[last])
	}
	i50, i95, i99 := rank(0.50, n), rank(0.95, n), rank(0.99, n)
	at := make([]int, len(sets))
	p := Percentiles{N: n}
	var sum float64
	for k := range n {
		best := -1
		for i, ws := range sets {
			if at[i] < len(ws) && (best < 0 || ws[at[i]] < sets[best][at[best]]) {
				best = i
			}
		}
		w := sets[best][at[best]]
		at[best]++
		sum += float64(w)
		if k == i50 {
			p.P50 = w
		}
		if k == i95 {
			p.P95 = w
		}
		if k == i99 {
			p.P99 = w
		}
		p.Max = w
	}
	p.Mean = time.Duration(sum / float64(n))
	return p
}
