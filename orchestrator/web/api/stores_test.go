package api

import (
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/queues/flows"
	"github.com/ballastdev/ballast/queues/leader"
	"github.com/ballastdev/ballast/queues/logs"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/queues/usage"
)

// The wired stores must keep satisfying each part the endpoints use; a
// method renamed in queues fails here. internal/archtest reads these
// lines to hold each interface to at most 15 methods.
var (
	_ JobDesk             = (*queues.Store)(nil)
	_ StatusReader        = (*queues.Store)(nil)
	_ controller.FlowJobs = (*queues.Store)(nil)
	_ FlowDesk            = (*flows.Store)(nil)

	_ AttemptLedger = (*usage.Store)(nil)
	_ LogReader     = (*logs.Store)(nil)
	_ WorkerLister  = (*registry.Store)(nil)

	_ CheckpointLister = (*checkpoints.Store)(nil)
	_ LeaseHolder      = (*leader.Store)(nil)
	_ RedisReader      = (*redisinfo.Store)(nil)
)
