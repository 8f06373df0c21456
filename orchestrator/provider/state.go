package provider

import "fmt"

// State is where an instance is in its life.
type State string

// The instance states. An instance moves forward only:
// Launching -> Running -> Releasing -> Gone, with Failed (and Gone, for an
// instance released before it ran) reachable from any live state.
const (
	// Launching: asked for, not yet running (a VM booting, a delayed child).
	Launching State = "launching"
	// Running: the worker process runs; billing has started.
	Running State = "running"
	// Releasing: told to drain; it stops once its jobs are checkpointed.
	Releasing State = "releasing"
	// Gone: stopped, on purpose or by exiting cleanly.
	Gone State = "gone"
	// Failed: it could not start, or exited with an error (see Instance.Err).
	Failed State = "failed"
)

// Live reports whether an instance in this state still holds capacity.
func (s State) Live() bool { return s == Launching || s == Running || s == Releasing }

// Valid reports whether s is one of the known states.
func (s State) Valid() bool {
	switch s {
	case Launching, Running, Releasing, Gone, Failed:
		return true
	}
	return false
}

// ParseState returns the state named s, or an error naming it.
func ParseState(s string) (State, error) {
	if st := State(s); st.Valid() {
		return st, nil
	}
	return "", fmt.Errorf("unknown instance state %q (want launching, running, releasing, gone or failed)", s)
}
