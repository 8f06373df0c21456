package checkpointtest

import "github.com/ballastdev/ballast/queues"

// Callers pass the real store; internal/archtest reads this line to hold
// JobStore to at most 15 methods.
var _ JobStore = (*queues.Store)(nil)
