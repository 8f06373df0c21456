package provider

import "fmt"

// State is where an instance is in its life.
type State string

// The instance states. An instance moves forward only:
// Launching -> Running -> Releasing -> Gone, with Failed (and Gone, for an
// instance released before it ran) reachable from any live state, and
// StockedOut from Launching.
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
	// StockedOut: it waited for capacity that never came (a pod left
	// unschedulable, a VM request parked by the cloud) and the provider
	// gave up on it. It is a stock-out found after Launch returned, so the
	// controller books it like a Launch that failed with ErrStockOut: the
	// policy falls back to another pool instead of waiting again.
	StockedOut State = "stocked_out"
)

// Live reports whether an instance in this state still holds capacity.
// A StockedOut one never got any.
func (s State) Live() bool { return s == Launching || s == Running || s == Releasing }

// Valid reports whether s is one of the known states.
func (s State) Valid() bool {
	switch s {
	case Launching, Running, Releasing, Gone, Failed, StockedOut:
		return true
	}
	return false
}

// ParseState returns the state named s, or an error naming it.
func ParseState(s string) (State, error) {
	if st := State(s); st.Valid() {
		return st, nil
	}
	return "", fmt.Errorf("unknown instance state %q (want launching, running, releasing, gone, failed or stocked_out)", s)
}

// Ended reports whether an instance in this state is over: it holds no
// capacity and never will again.
func (s State) Ended() bool { return s == Gone || s == Failed || s == StockedOut }
