package insight

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/telemetry"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// The overview's view of the job store, one interface per concern, so a
// reader sees that insight only reads, apart from its own samples and
// the trimming of old accounting. queues.Store implements them all
// (stores_test.go checks it).

// ClusterReader reads the cluster's shape now: leader, queues, topology,
// data loss and the active jobs; the workers are the registry's
// (Source.Registry). It includes what telemetry.Collect reads of the job
// store, since the collector hands it on.
type ClusterReader interface {
	telemetry.PoolReader
	Leader(ctx context.Context) (string, error)
	Topology(ctx context.Context) queues.Topology
	ReadEpoch(ctx context.Context) (queues.Epoch, *queues.DataLoss, error)
	ActiveJobs(ctx context.Context) ([]jobs.Job, error)
}

// UsageLedger reads the usage ledger that cost and settlement are
// priced from, and trims what is older than the kept window.
type UsageLedger interface {
	Usage(ctx context.Context, from time.Time, until time.Time) ([]queues.AttemptUsage, error)
	UsageWith(ctx context.Context, active []jobs.Job, from time.Time, until time.Time) ([]queues.AttemptUsage, error)
	WorkerLives(ctx context.Context, from time.Time, until time.Time) ([]queues.WorkerLife, error)
	Started(ctx context.Context) (time.Time, error)
	History(ctx context.Context, since time.Time, until time.Time, fn func(jobs.Job) error) error
	TrimAccounting(ctx context.Context, cutoff time.Time) error
}

// SeriesBook keeps the sampled series the advisor judges (fixed-pool
// idleness): the one thing insight writes.
type SeriesBook interface {
	RecordSample(ctx context.Context, name string, at time.Time, v float64, keep time.Duration) error
	Samples(ctx context.Context, name string, from time.Time, until time.Time) ([]queues.Sample, error)
}

// Store is what a Source holds: the three concerns above.
type Store interface {
	ClusterReader
	UsageLedger
	SeriesBook
}
