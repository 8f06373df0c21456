package controller

import (
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
)

// The store the command layer wires in must keep satisfying every
// interface the controller declares: a method renamed in queues fails
// here, not at a distant call site. internal/archtest reads these lines
// to hold each interface to at most 15 methods.
var (
	_ ControllerStore   = (*queues.Store)(nil)
	_ HybridStore       = (*queues.Store)(nil)
	_ LaunchBook        = (*queues.Store)(nil)
	_ JobSubmitter      = (*queues.Store)(nil)
	_ RunBook           = (*queues.Store)(nil)
	_ RunCanceller      = (*queues.Store)(nil)
	_ SweepBook         = (*queues.Store)(nil)
	_ SweepCanceller    = (*queues.Store)(nil)
	_ SweepReader       = (*queues.Store)(nil)
	_ DurabilityChecker = (*queues.Store)(nil)
	_ DataLossRecoverer = (*queues.Store)(nil)
	_ WorkerBook        = (*registry.Store)(nil)
)
