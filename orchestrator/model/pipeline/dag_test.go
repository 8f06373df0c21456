package pipeline

import (
	"errors"
	"reflect"
	"testing"
)

// deps builds a pipeline from "step: dependencies" pairs.
func deps(m map[string][]string) Pipeline {
	p := Pipeline{Schedule: "0 2 * * *", Steps: map[string]Step{}}
	for n, d := range m {
		p.Steps[n] = Step{Template: "t", DependsOn: d}
	}
	return p
}

var features = deps(map[string][]string{
	"fetch":    nil,
	"clean":    {"fetch"},
	"features": {"clean"},
	"train":    {"features"},
	"upload":   {"train"},
	"report":   {"train"},
	"viz":      {"report"},
})

func TestOrder(t *testing.T) {
	tests := []struct {
		name string
		p    Pipeline
		want []string
	}{
		{"chain with fan-out", features, []string{"fetch", "clean", "features", "train", "report", "upload", "viz"}},
		{"independent steps by name", deps(map[string][]string{"c": nil, "a": nil, "b": nil}), []string{"a", "b", "c"}},
		{"diamond", deps(map[string][]string{"d": {"b", "c"}, "c": {"a"}, "b": {"a"}, "a": nil}), []string{"a", "b", "c", "d"}},
		{"ready step beats a later name", deps(map[string][]string{"z": nil, "b": {"z"}, "y": nil}), []string{"y", "z", "b"}},
		{"duplicate dependency", deps(map[string][]string{"a": nil, "b": {"a", "a"}}), []string{"a", "b"}},
	}
	for _, tc := range tests {
		for i := 0; i < 5; i++ { // map order must not leak into the result
			got, err := Order(tc.p)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%s: Order = %v, %v; want %v", tc.name, got, err, tc.want)
			}
		}
	}
}

func TestOrderCycles(t *testing.T) {
	tests := []struct {
		name string
		p    Pipeline
		want string
	}{
		{"three steps", deps(map[string][]string{"a": {"c"}, "b": {"a"}, "c": {"b"}}), "a -> b -> c -> a"},
		{"two steps behind a good one", deps(map[string][]string{"fetch": nil, "x": {"fetch", "y"}, "y": {"x"}}), "x -> y -> x"},
		{"self", deps(map[string][]string{"a": {"a"}}), "a -> a"},
	}
	for _, tc := range tests {
		_, err := Order(tc.p)
		var ce *CycleError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: Order error = %v, want a CycleError", tc.name, err)
		}
		if got := joinArrow(ce.Path); got != tc.want {
			t.Errorf("%s: cycle %s, want %s", tc.name, got, tc.want)
		}
	}
	_, err := Order(deps(map[string][]string{"a": {"ghost"}}))
	var ue *UnknownStepError
	if !errors.As(err, &ue) || ue.Dependency != "ghost" {
		t.Errorf("unknown dependency: %v", err)
	}
}

func joinArrow(p []string) string {
	out := ""
	for i, n := range p {
		if i > 0 {
			out += " -> "
		}
		out += n
	}
	return out
}

func TestReady(t *testing.T) {
	withSide := deps(map[string][]string{"fetch": nil, "clean": {"fetch"}, "train": {"clean"}, "report": {"train"}, "side": nil, "merge": {"side", "train"}})
	tests := []struct {
		name        string
		p           Pipeline
		states      map[string]StepState
		start, skip []string
	}{
		{"fresh run starts the roots", withSide, nil, []string{"fetch", "side"}, nil},
		{"running steps are not started again", withSide, map[string]StepState{"fetch": StepRunning, "side": StepRunning}, nil, nil},
		{"a succeeded dependency frees its dependant", withSide,
			map[string]StepState{"fetch": StepSucceeded, "side": StepRunning}, []string{"clean"}, nil},
		{"waits for every dependency", withSide,
			map[string]StepState{"fetch": StepSucceeded, "clean": StepSucceeded, "train": StepSucceeded, "report": StepRunning, "side": StepRunning},
			nil, nil},
		{"failure skips dependants transitively, not independent branches", withSide,
			map[string]StepState{"fetch": StepSucceeded, "clean": StepFailed},
			[]string{"side"}, []string{"train", "merge", "report"}},
		{"skipped steps propagate too", withSide,
			map[string]StepState{"fetch": StepSkipped, "side": StepSucceeded},
			nil, []string{"clean", "train", "merge", "report"}},
		{"a doomed dependency skips even while another is pending", withSide,
			map[string]StepState{"fetch": StepSucceeded, "clean": StepSucceeded, "train": StepFailed, "side": StepRunning},
			nil, []string{"merge", "report"}},
		{"a cycle starts nothing", deps(map[string][]string{"a": {"b"}, "b": {"a"}}), nil, nil, nil},
	}
	for _, tc := range tests {
		start, skip := Ready(tc.p, tc.states)
		if !reflect.DeepEqual(start, tc.start) || !reflect.DeepEqual(skip, tc.skip) {
			t.Errorf("%s: Ready = start %v skip %v; want start %v skip %v", tc.name, start, skip, tc.start, tc.skip)
		}
	}
}

func TestRunThroughToFailure(t *testing.T) {
	// Drive a run to completion the way the controller will: start what is
	// ready, record outcomes, apply skips, until the run is over.
	states := NewRunStates(features)
	outcome := map[string]StepState{"train": StepFailed}
	var started []string
	for i := 0; RunState(states) == RunRunning; i++ {
		if i > len(features.Steps) {
			t.Fatal("run does not finish")
		}
		start, skip := Ready(features, states)
		for _, n := range skip {
			states[n] = StepSkipped
		}
		for _, n := range start {
			started = append(started, n)
			states[n] = StepSucceeded
			if o, ok := outcome[n]; ok {
				states[n] = o
			}
		}
	}
	if got := RunState(states); got != RunFailed {
		t.Errorf("RunState = %s, want failed", got)
	}
	if want := []string{"fetch", "clean", "features", "train"}; !reflect.DeepEqual(started, want) {
		t.Errorf("started %v, want %v", started, want)
	}
	for _, n := range []string{"upload", "report", "viz"} {
		if states[n] != StepSkipped {
			t.Errorf("%s is %s, want skipped", n, states[n])
		}
	}
}

func TestRunState(t *testing.T) {
	tests := []struct {
		states map[string]StepState
		want   RunOutcome
	}{
		{map[string]StepState{"a": StepPending}, RunRunning},
		{map[string]StepState{"a": StepSucceeded, "b": StepRunning}, RunRunning},
		{map[string]StepState{"a": StepFailed, "b": StepRunning}, RunRunning},
		{map[string]StepState{"a": StepFailed, "b": StepPending}, RunRunning},
		{map[string]StepState{"a": StepSucceeded, "b": StepSucceeded}, RunSucceeded},
		{map[string]StepState{"a": StepFailed, "b": StepSkipped, "c": StepSucceeded}, RunFailed},
		{map[string]StepState{"a": ""}, RunRunning},
	}
	for _, tc := range tests {
		if got := RunState(tc.states); got != tc.want {
			t.Errorf("RunState(%v) = %s, want %s", tc.states, got, tc.want)
		}
	}
}
