package sweep

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ParseMetric reads the metric named key from a line a trial printed: a JSON
// object such as {"metric": 0.93} or {"loss": 0.1, "step": 5}. It reports
// false for any other line (plain log output, a missing key, a value that is
// not a finite number), so it can be applied to every line of output.
func ParseMetric(line string, key string) (float64, bool) {
	line = strings.TrimSpace(line)
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' {
		return 0, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &obj); err != nil {
		return 0, false
	}
	raw, ok := obj[key]
	if !ok {
		return 0, false
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false // strings, booleans, null, objects
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// TrialState is where a trial is in its life. Queued, running and the
// terminal states mirror the trial's job; pending and stopped are the sweep's.
type TrialState string

const (
	// TrialPending: not enqueued yet, waiting for a max-parallel slot.
	TrialPending TrialState = "pending"
	// TrialQueued: its job waits in the burst queue.
	TrialQueued TrialState = "queued"
	// TrialRunning: its job runs on a worker.
	TrialRunning TrialState = "running"
	// TrialSucceeded: its job exited 0. Terminal.
	TrialSucceeded TrialState = "succeeded"
	// TrialFailed: its job failed for good. Terminal.
	TrialFailed TrialState = "failed"
	// TrialCancelled: the sweep or the trial was cancelled. Terminal.
	TrialCancelled TrialState = "cancelled"
	// TrialStopped: the median rule stopped it early. Terminal.
	TrialStopped TrialState = "stopped"
)

// Terminal reports whether the trial will not run again.
func (s TrialState) Terminal() bool {
	switch s {
	case TrialSucceeded, TrialFailed, TrialCancelled, TrialStopped:
		return true
	}
	return false
}

// TrialStatus is what the sweep record keeps of one trial.
type TrialStatus struct {
	Index int        `json:"index"`
	State TrialState `json:"state"`
	// Metric is the last metric the trial reported, nil if none.
	Metric *float64 `json:"metric,omitempty"`
}

// Best is the best trial of a sweep so far.
type Best struct {
	Index  int     `json:"index"`
	Metric float64 `json:"metric"`
}

// Summary is a sweep's progress, as `ballast sweep show` prints it.
type Summary struct {
	Total int `json:"total"`
	// Counts holds the number of trials in each state that has any.
	Counts map[TrialState]int `json:"counts"`
	// Done is true when every trial is terminal.
	Done bool `json:"done"`
	// Best is the succeeded trial with the best metric (ties: lowest index);
	// nil until a trial succeeds with a metric.
	Best *Best `json:"best,omitempty"`
}

// Summarize computes progress and the best trial. goal "" means minimize.
// Only succeeded trials compete for best: a running trial's metric is not
// final, and a stopped or failed trial's is not a result.
func Summarize(goal Goal, trials []TrialStatus) Summary {
	s := Summary{Total: len(trials), Counts: map[TrialState]int{}, Done: true}
	for _, tr := range trials {
		s.Counts[tr.State]++
		if !tr.State.Terminal() {
			s.Done = false
		}
		if tr.State != TrialSucceeded || tr.Metric == nil || math.IsNaN(*tr.Metric) {
			continue
		}
		m := *tr.Metric
		if s.Best == nil || goal.better(m, s.Best.Metric) || (m == s.Best.Metric && tr.Index < s.Best.Index) {
			s.Best = &Best{Index: tr.Index, Metric: m}
		}
	}
	return s
}

// Room returns how many of pending trials to enqueue now: as many as
// maxParallel allows with inflight trials (queued or running), never below
// zero (a limit lowered under what already runs enqueues nothing). 0 means
// no limit. Trials are enqueued in index order, so the caller takes the
// next Room of them.
func Room(maxParallel, inflight, pending int) int {
	n := pending
	if maxParallel > 0 {
		n = min(n, maxParallel-inflight)
	}
	return max(n, 0)
}

// MedianRule is the median early-stopping rule: from step AfterStep on, a
// trial whose best metric so far is worse than the median of the other
// trials' metrics at the same step is stopped, once at least MinTrials other
// trials have reached that step.
type MedianRule struct {
	MinTrials int `json:"min_trials"`
	AfterStep int `json:"after_step,omitempty"`
}

// ShouldStop applies rule to trial at step. trialMetrics[i][k] is trial i's
// k-th reported metric: a step is a report number, counted from 0. Trials
// that have not reached step do not count; NaN values are ignored. goal ""
// means minimize. A trial equal to the median is kept.
func ShouldStop(rule MedianRule, trialMetrics map[int][]float64, trial int, step int, goal Goal) bool {
	if step < 0 || step < rule.AfterStep {
		return false
	}
	own := trialMetrics[trial]
	if len(own) <= step {
		return false
	}
	best, have := 0.0, false
	for _, v := range own[:step+1] {
		if math.IsNaN(v) {
			continue
		}
		if !have || goal.better(v, best) {
			best, have = v, true
		}
	}
	if !have {
		return false
	}
	var others []float64
	for i, ms := range trialMetrics {
		if i == trial || len(ms) <= step || math.IsNaN(ms[step]) {
			continue
		}
		others = append(others, ms[step])
	}
	if len(others) == 0 || len(others) < rule.MinTrials {
		return false
	}
	return goal.better(median(others), best)
}

// median sorts vs in place and returns its median.
func median(vs []float64) float64 {
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}
