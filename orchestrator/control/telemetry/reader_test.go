package telemetry

import "github.com/ballastdev/ballast/queues"

// The wired store must keep satisfying PoolReader; internal/archtest
// reads this line to hold the interface to at most 15 methods.
var _ PoolReader = (*queues.Store)(nil)
