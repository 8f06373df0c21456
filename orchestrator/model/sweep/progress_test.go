package sweep

import (
	"reflect"
	"testing"
)

func TestParseMetric(t *testing.T) {
	cases := []struct {
		line, key string
		want      float64
		ok        bool
	}{
		{`{"metric": 0.93}`, "metric", 0.93, true},
		{`  {"loss": 0.1, "step": 5}` + "\n", "loss", 0.1, true},
		{`{"loss": 0.1, "step": 5}`, "step", 5, true},
		{`{"loss": -1.5e-3}`, "loss", -1.5e-3, true},
		{`{"loss": 0.1, "step": 5}`, "metric", 0, false},
		{`{"metric": "0.93"}`, "metric", 0, false},
		{`{"metric": null}`, "metric", 0, false},
		{`{"metric": true}`, "metric", 0, false},
		{`{"metric": [1]}`, "metric", 0, false},
		{`{"metric": 1e999}`, "metric", 0, false},
		{`epoch 3 metric 0.9`, "metric", 0, false},
		{`{"metric": 0.9} trailing`, "metric", 0, false},
		{`{"metric": 0.9`, "metric", 0, false},
		{`{"checkpoint": "/ckpt/3"}`, "metric", 0, false},
		{``, "metric", 0, false},
		{`[{"metric": 1}]`, "metric", 0, false},
	}
	for _, c := range cases {
		got, ok := ParseMetric(c.line, c.key)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseMetric(%q, %q) = %v, %v; want %v, %v", c.line, c.key, got, ok, c.want, c.ok)
		}
	}
}

func TestSummarizeBest(t *testing.T) {
	m := func(v float64) *float64 { return &v }
	trials := []TrialStatus{
		{Index: 0, State: TrialSucceeded, Metric: m(0.5)},
		{Index: 1, State: TrialSucceeded, Metric: m(0.2)},
		{Index: 2, State: TrialRunning, Metric: m(0.01)},  // not final
		{Index: 3, State: TrialStopped, Metric: m(0.001)}, // not a result
		{Index: 4, State: TrialSucceeded, Metric: m(0.9)},
		{Index: 5, State: TrialSucceeded, Metric: m(0.2)}, // tie with 1
		{Index: 6, State: TrialSucceeded},                 // no metric
		{Index: 7, State: TrialPending},
		{Index: 8, State: TrialFailed, Metric: m(5)},
		{Index: 9, State: TrialQueued},
	}
	s := Summarize(Minimize, trials)
	if s.Best == nil || *s.Best != (Best{Index: 1, Metric: 0.2}) {
		t.Errorf("minimize best %+v, want trial 1 at 0.2", s.Best)
	}
	wantCounts := map[TrialState]int{TrialSucceeded: 5, TrialRunning: 1, TrialStopped: 1, TrialPending: 1, TrialFailed: 1, TrialQueued: 1}
	if s.Total != 10 || s.Done || !reflect.DeepEqual(s.Counts, wantCounts) {
		t.Errorf("summary %+v", s)
	}
	if s := Summarize("", trials); s.Best == nil || s.Best.Index != 1 {
		t.Errorf("empty goal should minimize, best %+v", s.Best)
	}
	if s := Summarize(Maximize, trials); s.Best == nil || *s.Best != (Best{Index: 4, Metric: 0.9}) {
		t.Errorf("maximize best %+v, want trial 4 at 0.9", s.Best)
	}
	// Ties go to the lowest index whatever the order of the input.
	rev := []TrialStatus{trials[5], trials[4], trials[1]}
	if s := Summarize(Minimize, rev); s.Best == nil || s.Best.Index != 1 {
		t.Errorf("tie best %+v, want trial 1", s.Best)
	}
	done := Summarize(Maximize, []TrialStatus{{Index: 0, State: TrialFailed}, {Index: 1, State: TrialCancelled}})
	if !done.Done || done.Best != nil {
		t.Errorf("all terminal, none succeeded: %+v", done)
	}
	if empty := Summarize(Minimize, nil); !empty.Done || empty.Total != 0 || empty.Best != nil {
		t.Errorf("empty summary %+v", empty)
	}
}

func TestRoomHonoursMaxParallel(t *testing.T) {
	for _, c := range []struct{ max, inflight, pending, want int }{
		{2, 0, 4, 2},
		{4, 1, 4, 3},
		{4, 4, 4, 0},
		{4, 6, 4, 0}, // over the limit (limit lowered): enqueue nothing
		{10, 0, 4, 4},
		{0, 100, 4, 4}, // 0: no limit
		{3, 0, 0, 0},
	} {
		if got := Room(c.max, c.inflight, c.pending); got != c.want {
			t.Errorf("Room(%d, %d, %d) = %d, want %d", c.max, c.inflight, c.pending, got, c.want)
		}
	}
}

func TestShouldStopMedianRule(t *testing.T) {
	rule := MedianRule{MinTrials: 3, AfterStep: 1}
	metrics := map[int][]float64{
		0: {1.0, 0.8, 0.6},
		1: {1.0, 0.7, 0.5},
		2: {1.0, 0.9, 0.7},
		3: {1.2, 1.1, 1.0}, // worse than the others
		4: {0.5, 0.4},      // better than the others
		5: {2.0},           // has not reached step 1
	}
	cases := []struct {
		name  string
		rule  MedianRule
		trial int
		step  int
		goal  Goal
		want  bool
	}{
		{"worse than median", rule, 3, 1, Minimize, true},
		{"worse at a later step", rule, 3, 2, Minimize, true},
		{"too few others at a later step", MedianRule{MinTrials: 4, AfterStep: 1}, 3, 2, Minimize, false}, // trial 4 stopped reporting at step 1
		{"better than median", rule, 4, 1, Minimize, false},
		{"median trial itself kept", rule, 0, 1, Minimize, false},
		{"before after_step", rule, 3, 0, Minimize, false},
		{"too few others", MedianRule{MinTrials: 5, AfterStep: 1}, 3, 1, Minimize, false},
		{"trial not at step yet", rule, 5, 1, Minimize, false},
		{"maximize flips", rule, 4, 1, Maximize, true},
		{"maximize keeps the high one", rule, 3, 1, Maximize, false},
		{"unknown trial", rule, 42, 1, Minimize, false},
	}
	for _, c := range cases {
		if got := ShouldStop(c.rule, metrics, c.trial, c.step, c.goal); got != c.want {
			t.Errorf("%s: ShouldStop = %v, want %v", c.name, got, c.want)
		}
	}

	// Best so far counts: a trial that was good earlier is not stopped for
	// one bad report.
	m2 := map[int][]float64{
		0: {0.1, 0.9},
		1: {0.5, 0.5},
		2: {0.5, 0.5},
		3: {0.5, 0.5},
	}
	if ShouldStop(MedianRule{MinTrials: 3}, m2, 0, 1, Minimize) {
		t.Error("stopped a trial whose best so far beats the median")
	}
	// Even count: the median is the mean of the middle two, (0.4+0.6)/2.
	others := map[int][]float64{1: {0.2}, 2: {0.4}, 3: {0.6}, 4: {0.9}}
	for _, c := range []struct {
		v    float64
		want bool
	}{{0.45, false}, {0.5, false}, {0.55, true}} {
		others[0] = []float64{c.v}
		if got := ShouldStop(MedianRule{MinTrials: 4}, others, 0, 0, Minimize); got != c.want {
			t.Errorf("%v against median 0.5: ShouldStop = %v, want %v", c.v, got, c.want)
		}
	}
}
