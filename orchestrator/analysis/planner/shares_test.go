package planner

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Ten hours: a holds 2 slots all along, b 6 slots for the first hour, c 1
// slot for the first five; a job without a team owns no share.
func sharesTrace() trace.Trace {
	j := func(team string, slots int, from, d time.Duration) trace.Job {
		return trace.Job{Team: team, Slots: slots, Submit: from, Duration: d, Class: "core"}
	}
	return trace.Trace{Jobs: []trace.Job{
		j("a", 2, 0, 10*time.Hour),
		j("b", 6, 0, time.Hour),
		j("c", 1, 0, 5*time.Hour),
		j("", 3, 0, 10*time.Hour),
	}}
}

func TestSizeSharesByPercentile(t *testing.T) {
	s, err := SizeShares(sharesTrace(), 10, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ShareSize{
		"a": {Team: "a", Mean: 2, Median: 2, Percentile: 2, Peak: 2, Slots: 2},
		// b's 6 slots stand a tenth of the time: the 90th percentile is 0.
		"b": {Team: "b", Mean: 0.6, Median: 0, Percentile: 0, Peak: 6, Slots: 0},
		"c": {Team: "c", Mean: 0.5, Median: 0, Percentile: 1, Peak: 1, Slots: 1},
	}
	if len(s.Teams) != 3 || s.Scaled || s.Common != 7 {
		t.Fatalf("sizes %+v", s)
	}
	for _, got := range s.Teams {
		w := want[got.Team]
		if got.Median != w.Median || got.Percentile != w.Percentile || got.Peak != w.Peak || got.Slots != w.Slots ||
			got.Mean < w.Mean-1e-9 || got.Mean > w.Mean+1e-9 {
			t.Errorf("team %s: %+v, want %+v", got.Team, got, w)
		}
	}
	// At the 95th percentile b needs its 6 slots; on a quota of 6 the 9
	// slots asked for are scaled to 4/3, 4 and 2/3: floors 1, 4, 0 and
	// the odd slot to c, the largest remainder.
	s, err = SizeShares(sharesTrace(), 6, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, tm := range s.Teams {
		got[tm.Team] = tm.Slots
	}
	if !s.Scaled || s.Common != 0 || got["a"] != 1 || got["b"] != 4 || got["c"] != 1 {
		t.Errorf("scaled to a quota of 6: %v (%+v)", got, s)
	}
	for _, p := range []float64{0, -0.5, 1.5} {
		if _, err := SizeShares(sharesTrace(), 6, p); err == nil {
			t.Errorf("percentile %v accepted", p)
		}
	}
}
