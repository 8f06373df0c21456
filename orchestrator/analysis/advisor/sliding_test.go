package advisor

import (
	"testing"
	"time"
)

func TestP95IsNearestRank(t *testing.T) {
	mins := func(n int) []time.Duration {
		var out []time.Duration
		for i := 1; i <= n; i++ {
			out = append(out, time.Duration(i)*time.Minute)
		}
		return out
	}
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{
		{1, 1 * time.Minute},    // rank ceil(0.95) = 1
		{10, 10 * time.Minute},  // rank ceil(9.5) = 10: below 20 it is the max
		{20, 19 * time.Minute},  // rank ceil(19) = 19
		{21, 20 * time.Minute},  // rank ceil(19.95) = 20
		{100, 95 * time.Minute}, // rank 95
	} {
		if got := P95(mins(tc.n)); got != tc.want {
			t.Errorf("p95 of 1..%d min = %v, want %v", tc.n, got, tc.want)
		}
	}
	if got := P95(nil); got != 0 {
		t.Errorf("p95 of nothing = %v, want 0", got)
	}
}

func TestWorstWindowSlides(t *testing.T) {
	// Waits at minutes 0, 4, 8, 12, 16 and 30 of a 10-minute window:
	//   [0, 10)  waits 1, 12, 13     -> p95 13m
	//   [4, 14)  waits 12, 13, 14    -> p95 14m  <- worst, first of the 14s
	//   [8, 18)  waits 13, 14, 2     -> p95 14m, same jobs count, later
	//   [12, 22) and [16, 26) take in nothing new: skipped
	//   [30, 40) wait 5              -> p95 5m
	m := time.Minute
	waits := []Wait{
		{At: at(0, 30, 0), Wait: 5 * m},
		{At: at(0, 8, 0), Wait: 13 * m},
		{At: at(0, 0, 0), Wait: 1 * m},
		{At: at(0, 16, 0), Wait: 2 * m},
		{At: at(0, 4, 0), Wait: 12 * m},
		{At: at(0, 12, 0), Wait: 14 * m},
	}
	got, ok := worstWindow(waits, 10*m)
	want := waitWindow{From: at(0, 4, 0), Until: at(0, 14, 0), P95: 14 * m, Jobs: 3}
	if !ok || got != want {
		t.Errorf("worstWindow = %+v, %v; want %+v", got, ok, want)
	}
	// A wider window holds them all but the last: 1, 2, 12, 13, 14 -> 14m
	// over 5 jobs from minute 0.
	got, _ = worstWindow(waits, 20*m)
	want = waitWindow{From: at(0, 0, 0), Until: at(0, 20, 0), P95: 14 * m, Jobs: 5}
	if got != want {
		t.Errorf("20-minute worstWindow = %+v, want %+v", got, want)
	}
}

func TestWorstWindowIgnoresTheTailOfABurst(t *testing.T) {
	// 20 jobs 30 s apart, waiting 1..20 min, all inside one 10-minute
	// window: its p95 is the 19th, 19 min. The windows starting later hold
	// only the same jobs minus the first ones; the last alone would read
	// 20 min, an artifact of cutting the burst.
	var waits []Wait
	for k := range 20 {
		waits = append(waits, Wait{At: at(3, 0, 30*k), Wait: time.Duration(k+1) * time.Minute})
	}
	got, ok := worstWindow(waits, 10*time.Minute)
	want := waitWindow{From: at(3, 0, 0), Until: at(3, 10, 0), P95: 19 * time.Minute, Jobs: 20}
	if !ok || got != want {
		t.Errorf("worstWindow = %+v, %v; want %+v", got, ok, want)
	}
}

func TestWorstWindowSameInstantIsOneWindow(t *testing.T) {
	// Two jobs stamped at one instant belong to every window from there:
	// anchoring at the second must not drop the first.
	waits := []Wait{
		{At: at(1, 0, 0), Wait: 30 * time.Minute},
		{At: at(1, 0, 0), Wait: time.Minute},
	}
	got, _ := worstWindow(waits, 10*time.Minute)
	if got.Jobs != 2 || got.P95 != 30*time.Minute {
		t.Errorf("worstWindow = %+v, want 2 jobs with p95 30m", got)
	}
	if _, ok := worstWindow(nil, 10*time.Minute); ok {
		t.Error("worstWindow of no waits found a window")
	}
}
