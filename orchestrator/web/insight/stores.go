package insight

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/telemetry"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/usage"
)

// The overview's view of the stores, one interface per concern, so a
// reader sees that insight only reads, apart from its own samples and
// the trimming of old accounting. queues.Store implements ClusterReader
// and JobHistory; the accounting store, usage.Store, implements
// UsageLedger and SeriesBook; leader.Store implements LeaseHolder and
// redisinfo.Store TopologyReader (stores_test.go checks them).

// ClusterReader reads the cluster's shape now: queues, data loss and the
// active jobs; the workers are the registry's (Source.Registry), the
// leader the lease's (Source.Lease) and the topology Redis's own
// (Source.Redis). It includes what telemetry.Collect reads of the job
// store, since the collector hands it on.
type ClusterReader interface {
	telemetry.PoolReader
	ReadEpoch(ctx context.Context) (queues.Epoch, *queues.DataLoss, error)
	ActiveJobs(ctx context.Context) ([]jobs.Job, error)
}

// LeaseHolder reads which controller leads (queues/leader).
type LeaseHolder interface {
	Holder(ctx context.Context) (string, error)
}

// TopologyReader reads the Redis topology the store runs on now
// (queues/redisinfo).
type TopologyReader interface {
	Topology(ctx context.Context) redisinfo.Topology
}

// JobHistory reads what the jobs did before now: when Ballast first ran
// here, and the records of a window.
type JobHistory interface {
	Started(ctx context.Context) (time.Time, error)
	History(ctx context.Context, since time.Time, until time.Time, fn func(jobs.Job) error) error
}

// UsageLedger reads the usage ledger that cost and settlement are
// priced from, and trims what is older than the kept window.
type UsageLedger interface {
	Usage(ctx context.Context, active []jobs.Job, from time.Time, until time.Time) ([]usage.AttemptUsage, error)
	WorkerLives(ctx context.Context, from time.Time, until time.Time) ([]usage.WorkerLife, error)
	TrimAccounting(ctx context.Context, cutoff time.Time) error
}

// SeriesBook keeps the sampled series the advisor judges (fixed-pool
// idleness): the one thing insight writes.
type SeriesBook interface {
	RecordSample(ctx context.Context, name string, at time.Time, v float64, keep time.Duration) error
	Samples(ctx context.Context, name string, from time.Time, until time.Time) ([]usage.Sample, error)
}

// Store is what a Source reads of the job store.
type Store interface {
	ClusterReader
	JobHistory
}

// Accounting is what a Source reads and keeps of the accounting.
type Accounting interface {
	UsageLedger
	SeriesBook
}
