package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSpreadOf(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{5}, Spread{5, 5, 5}},
		{[]float64{3, 1, 2}, Spread{1, 2, 3}},
		{[]float64{4, 1, 3, 2}, Spread{1, 2.5, 4}},
	} {
		if got := spreadOf(c.in); got != c.want {
			t.Errorf("spreadOf(%v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// TestSummarizeTakesEachRunsOwnRatio: the ratio's spread is over the runs'
// own ratios, per-job figures divide by each run's count, and a violation
// in any run shows in the summary.
func TestSummarizeTakesEachRunsOwnRatio(t *testing.T) {
	run := func(raw, bal float64, evals, other int64, violations int) Result {
		r := Result{Raw: Throughput{Count: 100, PerSecond: raw}, RawDrain: Throughput{Count: 100, PerSecond: raw / 2},
			Ballast: Throughput{Count: 100, PerSecond: bal,
				Usage: Usage{Commands: map[string]int64{"evalsha": evals, "hset": other}, RedisCPU: 5 * time.Millisecond}}}
		r.Ratio = bal / raw
		r.ExactlyOnce.Checked = 100
		for range violations {
			r.ExactlyOnce.Violations = append(r.ExactlyOnce.Violations, Violation{JobID: "j", Problem: "ran 2 times"})
		}
		return r
	}
	s := Summarize([]Result{run(1000, 500, 300, 1000, 0), run(2000, 600, 300, 1200, 0), run(4000, 3000, 300, 1400, 1)})
	if s.Ratio != (Spread{0.3, 0.5, 0.75}) {
		t.Errorf("ratio spread %+v, want each run's own ratio: 0.3 / 0.5 / 0.75", s.Ratio)
	}
	if s.BallastCommands != (Spread{13, 15, 17}) || s.BallastCommandsNoEval != (Spread{10, 12, 14}) {
		t.Errorf("commands per job %+v, without evalsha %+v; want 13/15/17 and 10/12/14", s.BallastCommands, s.BallastCommandsNoEval)
	}
	if s.BallastRedisCPU.Median != 50 {
		t.Errorf("redis cpu per job %+v, want 50 µs", s.BallastRedisCPU)
	}
	if s.ExactlyOnceChecked != 300 || s.ExactlyOnceViolations != 1 {
		t.Errorf("exactly-once %d checked, %d violations; want 300 and 1", s.ExactlyOnceChecked, s.ExactlyOnceViolations)
	}
	var out bytes.Buffer
	s.Print(&out)
	if !strings.Contains(out.String(), "EXACTLY-ONCE VIOLATED: 1 of 300") || !strings.Contains(out.String(), "0.30") {
		t.Errorf("summary misses the violation or the ratio:\n%s", out.String())
	}
}

// TestCostsPerJob: a phase's progress line divides by its own count.
func TestCostsPerJob(t *testing.T) {
	tp := Throughput{Count: 10, Calls: map[string]int{"script": 4, "pipeline": 1},
		Usage: Usage{RedisCPU: time.Millisecond, ClientCPU: 2 * time.Millisecond}}
	if got, want := tp.costs(), "redis 100 µs, this process 200 µs, 0.50 round trips each"; got != want {
		t.Errorf("costs() = %q, want %q", got, want)
	}
	if got := (Throughput{}).costs(); !strings.HasPrefix(got, "redis 0 µs") {
		t.Errorf("costs() of an empty phase = %q", got)
	}
}

// TestRoundsAddUp: a run's throughput is its rounds' jobs over their time,
// with their calls and usage summed, and the summary's round spread is
// over every round of every run.
func TestRoundsAddUp(t *testing.T) {
	var tp Throughput
	tp.add(Throughput{Count: 100, Elapsed: time.Second, Calls: map[string]int{"evalsha": 3},
		Usage: Usage{Commands: map[string]int64{"hset": 10}, RedisCPU: time.Millisecond}})
	tp.add(Throughput{Count: 300, Elapsed: time.Second, Calls: map[string]int{"evalsha": 1, "get": 2},
		Usage: Usage{Commands: map[string]int64{"hset": 5}, RedisCPU: 2 * time.Millisecond, ClientCPU: time.Millisecond}})
	if tp.Count != 400 || tp.Elapsed != 2*time.Second || tp.PerSecond != 200 || tp.Calls["evalsha"] != 4 || tp.Calls["get"] != 2 ||
		tp.Usage.Commands["hset"] != 15 || tp.Usage.RedisCPU != 3*time.Millisecond || tp.Usage.ClientCPU != time.Millisecond {
		t.Fatalf("sum of two rounds: %+v", tp)
	}
	if got := ratioOf(Throughput{PerSecond: 90}, better(Throughput{PerSecond: 100}, Throughput{PerSecond: 120})); got != 0.75 {
		t.Errorf("ratio against the better baseline = %v, want 0.75", got)
	}
	if got := better(Throughput{PerSecond: 130}, Throughput{PerSecond: 120}); got.PerSecond != 130 {
		t.Errorf("better of 130 end to end and 120 draining = %v", got.PerSecond)
	}
	if got := ratioOf(Throughput{PerSecond: 90}, Throughput{}); got != 0 {
		t.Errorf("ratio without a baseline = %v, want 0", got)
	}
	if got := roundSizes(10, 4); len(got) != 4 || got[0] != 3 || got[1] != 3 || got[2] != 2 || got[3] != 2 {
		t.Errorf("roundSizes(10, 4) = %v, want [3 3 2 2]", got)
	}
	s := Summarize([]Result{{RoundRatios: []float64{0.9, 1.2}}, {RoundRatios: []float64{0.7, 1.1, 1.0}}})
	if s.RoundRatio != (Spread{0.7, 1.0, 1.2}) {
		t.Errorf("round spread %+v, want 0.7 / 1.0 / 1.2 over all five rounds", s.RoundRatio)
	}
}
