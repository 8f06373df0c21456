package telemetry

import (
	"context"

	"github.com/ballastdev/ballast/queues"
)

// PoolReader is what Collect reads of the store: queue depths and the
// registered workers, nothing of jobs. queues.Store implements it
// (reader_test.go checks it).
type PoolReader interface {
	QueueStats(ctx context.Context) ([]queues.QueueStats, error)
	Workers(ctx context.Context) ([]queues.WorkerInfo, error)
}
