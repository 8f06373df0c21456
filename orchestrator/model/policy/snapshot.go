package policy

import "time"

// Snapshot is everything Decide looks at: the controller builds it from the
// job records, the worker registry and its own launch book each tick; the
// simulator builds it from its model. Decide never modifies it.
type Snapshot struct {
	Config Config
	Pools  []Pool
	// Workers are the registered workers of every pool, fixed ones included.
	Workers []Worker
	// Jobs are the non-terminal jobs.
	Jobs []Job
	// Launches are elastic workers asked for that have not registered yet.
	Launches []Launch
	// TeamUsage is each team's decayed fixed-slot usage (see
	// shares.Decayed): the tie-break of fair borrowing under shares.
	TeamUsage map[string]float64
}

// Launch is a scale-up the provider has not filled yet. The controller
// removes it (or lowers Count) as workers register, and drops it when it
// gives up on the provider; while a spot launch older than
// Config.SpotFallbackAfter stays in the book, its pool counts as unavailable.
type Launch struct {
	Pool        string
	Count       int
	RequestedAt time.Time
}
