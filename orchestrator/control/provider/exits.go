package provider

// ExitNotifier is implemented by providers that see their workers' processes
// end (Local reaps its children). The controller recovers such a worker at
// once instead of waiting for its heartbeats to go stale: its jobs are
// requeued within milliseconds of the exit.
type ExitNotifier interface {
	// Exits delivers the ID of each instance whose process ended, for any
	// reason. Deliveries are best effort (a full channel drops one; the
	// worker TTL still catches it).
	Exits() <-chan string
}

// exitBuffer is how many exits can wait for the controller to read them.
const exitBuffer = 256

// Exits forwards the wrapped provider's exits; nil (never ready) when it
// reports none.
func (r *retrying) Exits() <-chan string {
	if n, ok := r.Provider.(ExitNotifier); ok {
		return n.Exits()
	}
	return nil
}

// Exits delivers the IDs of children that ended.
func (l *Local) Exits() <-chan string { return l.exits }
