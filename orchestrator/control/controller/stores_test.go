package controller

import (
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
	"github.com/ballastdev/ballast/queues/leader"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/queues/usage"
)

// The stores the command layer wires in must keep satisfying every
// interface the controller declares: a method renamed in queues fails
// here, not at a distant call site. internal/archtest reads these lines
// to hold each interface to at most 15 methods.
var (
	_ ControllerStore   = (*queues.Store)(nil)
	_ HybridStore       = (*queues.Store)(nil)
	_ LaunchBook        = (*usage.Store)(nil)
	_ JobSubmitter      = (*queues.Store)(nil)
	_ StepJobs          = (*queues.Store)(nil)
	_ TrialJobs         = (*queues.Store)(nil)
	_ DurabilityChecker = (*redisinfo.Store)(nil)
	_ DataLossRecoverer = (*queues.Store)(nil)

	_ RunBook        = (*flows.Store)(nil)
	_ RunCanceller   = (*flows.Store)(nil)
	_ SweepBook      = (*flows.Store)(nil)
	_ SweepCanceller = (*flows.Store)(nil)
	_ SweepReader    = (*flows.Store)(nil)

	_ WorkerBook  = (*registry.Store)(nil)
	_ LeaderLease = (*leader.Store)(nil)
)
