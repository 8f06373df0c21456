package workers

import (
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/queues/gangs"
	"github.com/ballastdev/ballast/queues/logs"
)

// New hands the one store to every concern, and the stores built on it
// to GangJoiner, LogAppender and CheckpointBook, so they must keep
// satisfying each; a method renamed in queues fails here. internal/archtest reads these lines to hold each
// interface to at most 15 methods.
var (
	_ DeliverySource  = (*queues.Store)(nil)
	_ AttemptRecorder = (*queues.Store)(nil)
	_ CheckpointBook  = (*checkpoints.Store)(nil)
	_ WorkerRegistry  = (*queues.Store)(nil)
	_ LogAppender     = (*logs.Store)(nil)
	_ GangJoiner      = (*gangs.Store)(nil)
)
