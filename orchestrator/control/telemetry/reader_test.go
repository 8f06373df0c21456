package telemetry

import (
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
)

// The wired stores must keep satisfying PoolReader and WorkerLister;
// internal/archtest reads these lines to hold each interface to at most
// 15 methods.
var (
	_ PoolReader   = (*queues.Store)(nil)
	_ WorkerLister = (*registry.Store)(nil)
)
