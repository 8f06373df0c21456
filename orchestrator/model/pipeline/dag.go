package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// StepState is the state of one step within a run. A step that failed is
// final: the job's own retries (per its template) have already been spent.
type StepState string

// The states of a step.
const (
	StepPending   StepState = "pending"
	StepRunning   StepState = "running"
	StepSucceeded StepState = "succeeded"
	StepFailed    StepState = "failed"
	StepSkipped   StepState = "skipped"
	// StepCancelled: the run was cancelled while the step ran, or its job
	// was cancelled by hand. It counts as a failure.
	StepCancelled StepState = "cancelled"
)

// RunOutcome is the state of a whole run.
type RunOutcome string

// The outcomes of a run.
const (
	RunRunning   RunOutcome = "running"
	RunSucceeded RunOutcome = "succeeded"
	RunFailed    RunOutcome = "failed"
	// RunCancelled: an operator or the replace overlap policy cancelled it.
	RunCancelled RunOutcome = "cancelled"
	// RunSkipped: its time came while the previous run was active and the
	// overlap policy is forbid. It is recorded so the gap is visible.
	RunSkipped RunOutcome = "skipped"
)

// Terminal reports whether the run has ended.
func (o RunOutcome) Terminal() bool { return o != RunRunning && o != "" }

// CycleError reports a dependency cycle. Path starts and ends at the same
// step and starts at the cycle's smallest name, so the message is stable.
type CycleError struct{ Path []string }

func (e *CycleError) Error() string {
	return "dependency cycle " + strings.Join(e.Path, " -> ") + "; remove one of these depends_on entries"
}

// UnknownStepError reports a depends_on entry that names no step.
type UnknownStepError struct{ Step, Dependency string }

func (e *UnknownStepError) Error() string {
	return fmt.Sprintf("step %q depends on unknown step %q", e.Step, e.Dependency)
}

// Order returns the steps in an order where every step comes after its
// dependencies; among steps that could go next, the smallest name goes first,
// so the order is the same on every call.
func Order(p Pipeline) ([]string, error) {
	names := slices.Sorted(maps.Keys(p.Steps))
	for _, n := range names {
		for _, d := range p.Steps[n].DependsOn {
			if _, ok := p.Steps[d]; !ok {
				return nil, &UnknownStepError{Step: n, Dependency: d}
			}
		}
	}
	if c := findCycle(p, names); c != nil {
		return nil, &CycleError{Path: c}
	}
	waiting := make(map[string]int, len(names)) // unmet dependencies per step
	dependants := make(map[string][]string, len(names))
	for _, n := range names {
		for _, d := range uniq(p.Steps[n].DependsOn) {
			waiting[n]++
			dependants[d] = append(dependants[d], n)
		}
	}
	var ready, out []string
	for _, n := range names {
		if waiting[n] == 0 {
			ready = append(ready, n)
		}
	}
	for len(ready) > 0 {
		sort.Strings(ready)
		n := ready[0]
		ready = ready[1:]
		out = append(out, n)
		for _, m := range dependants[n] {
			if waiting[m]--; waiting[m] == 0 {
				ready = append(ready, m)
			}
		}
	}
	return out, nil
}

// findCycle returns one cycle as a closed path, or nil. The depth-first
// search visits steps and dependencies in name order, so the same config
// always reports the same cycle.
func findCycle(p Pipeline, names []string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	mark := make(map[string]int, len(names))
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		mark[n] = onPath
		path = append(path, n)
		deps := uniq(p.Steps[n].DependsOn)
		sort.Strings(deps)
		for _, d := range deps {
			if _, ok := p.Steps[d]; !ok {
				continue
			}
			switch mark[d] {
			case onPath:
				i := len(path) - 1
				for path[i] != d {
					i--
				}
				return rotate(path[i:])
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[n] = done
		return nil
	}
	for _, n := range names {
		if mark[n] == unseen {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

// rotate turns a cycle of dependencies (each step depends on the next) into
// a closed path starting at its smallest name, written in the order work
// would flow: dependency first.
func rotate(cycle []string) []string {
	// cycle[i] depends on cycle[i+1]; reverse it so each step precedes its dependant.
	rev := make([]string, len(cycle))
	for i, n := range cycle {
		rev[len(cycle)-1-i] = n
	}
	lo := 0
	for i, n := range rev {
		if n < rev[lo] {
			lo = i
		}
	}
	out := append(append([]string(nil), rev[lo:]...), rev[:lo]...)
	return append(out, out[0])
}

// NewRunStates returns the states of a run that has just been created: every
// step pending. RunState needs every step listed.
func NewRunStates(p Pipeline) map[string]StepState {
	out := make(map[string]StepState, len(p.Steps))
	for n := range p.Steps {
		out[n] = StepPending
	}
	return out
}

// Ready says which pending steps to start now (all dependencies succeeded)
// and which to mark skipped (a dependency failed or was skipped, directly or
// through other steps). A step missing from states counts as pending. Both
// lists follow Order. A pipeline that does not pass Order (validate-config
// refuses those) gets nothing to start.
func Ready(p Pipeline, states map[string]StepState) (start []string, skip []string) {
	order, err := Order(p)
	if err != nil {
		return nil, nil
	}
	doomed := make(map[string]bool) // failed, skipped, or about to be skipped
	for _, n := range order {
		st := states[n]
		if st == "" {
			st = StepPending
		}
		if st == StepFailed || st == StepSkipped || st == StepCancelled {
			doomed[n] = true
			continue
		}
		if st != StepPending {
			continue
		}
		allDone := true
		for _, d := range p.Steps[n].DependsOn {
			if doomed[d] {
				doomed[n] = true
				break
			}
			if states[d] != StepSucceeded {
				allDone = false
			}
		}
		switch {
		case doomed[n]:
			skip = append(skip, n)
		case allDone:
			start = append(start, n)
		}
	}
	return start, skip
}

// RunState sums up a run from the states of all its steps (see
// NewRunStates): running while any step is pending or running, then failed if
// any step failed, else succeeded. A failed step does not stop independent
// branches: they finish first, and the run then fails.
func RunState(states map[string]StepState) RunOutcome {
	failed := false
	for _, st := range states {
		switch st {
		case StepPending, StepRunning, "":
			return RunRunning
		case StepFailed, StepCancelled:
			failed = true
		}
	}
	if failed {
		return RunFailed
	}
	return RunSucceeded
}

func uniq(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := make([]string, 0, len(list))
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
