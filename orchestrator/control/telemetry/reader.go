package telemetry

import (
	"context"

	"github.com/ballastdev/ballast/queues"
)

// PoolReader is what Collect reads of the job store: queue depths,
// nothing of jobs. queues.Store implements it (reader_test.go checks it).
type PoolReader interface {
	QueueStats(ctx context.Context) ([]queues.QueueStats, error)
}

// WorkerLister is what Collect reads of the worker registry: the
// registered workers. registry.Store implements it.
type WorkerLister interface {
	Workers(ctx context.Context) ([]queues.WorkerInfo, error)
}
