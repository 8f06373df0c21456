package jobs

// State is where a job is in its life. The job record in Redis holds it; every
// change of it is fenced by the attempt number.
type State string

const (
	// StateQueued: an attempt is waiting in a queue for a worker.
	StateQueued State = "queued"
	// StateRunning: a worker claimed the current attempt and runs it.
	StateRunning State = "running"
	// StateSucceeded: the last attempt exited 0. Terminal.
	StateSucceeded State = "succeeded"
	// StateFailed: the last attempt failed and no retry is left. Terminal.
	StateFailed State = "failed"
	// StateCancelled: a user cancelled the job. Terminal.
	StateCancelled State = "cancelled"
)

// Terminal reports whether no further attempt will run.
func (s State) Terminal() bool {
	return s == StateSucceeded || s == StateFailed || s == StateCancelled
}

// Valid reports whether s is one of the known states.
func (s State) Valid() bool {
	switch s {
	case StateQueued, StateRunning, StateSucceeded, StateFailed, StateCancelled:
		return true
	}
	return false
}
