package api

import (
	"context"

	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
	"github.com/ballastdev/ballast/queues/logs"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/usage"
)

// The API's view of the job store, one interface per group of endpoints,
// so a reader sees what each can touch. Handler takes the concrete store
// once and hands each group its part; queues.Store implements them all
// but FlowDesk, which flows.Store implements, AttemptLedger, which the
// accounting store (usage.Store) implements, LogReader (logs.Store),
// WorkerLister (registry.Store), CheckpointLister (checkpoints.Store),
// LeaseHolder (leader.Store) and RedisReader (redisinfo.Store);
// stores_test.go checks them.

// JobDesk is what the job endpoints need: read a job, list a page, and
// cancel. Nothing of flows or status.
type JobDesk interface {
	Get(ctx context.Context, id string) (jobs.Job, error)
	ListPage(ctx context.Context, o queues.PageOptions) (queues.Page, error)
	Cancel(ctx context.Context, id string) (queues.CancelResult, error)
}

// CheckpointLister lists the checkpoints a job committed
// (queues/checkpoints), for the checkpoints endpoint.
type CheckpointLister interface {
	Committed(ctx context.Context, jobID string) ([]string, error)
}

// LogReader reads a job's output lines, page by page (queues/logs).
type LogReader interface {
	Logs(ctx context.Context, jobID string, after string, count int64) ([]logs.Line, error)
}

// WorkerLister is what CollectStatus reads of the worker registry
// (queues/registry).
type WorkerLister interface {
	Workers(ctx context.Context) ([]queues.WorkerInfo, error)
}

// LeaseHolder is what CollectStatus reads of the leader lease
// (queues/leader).
type LeaseHolder interface {
	Holder(ctx context.Context) (string, error)
}

// RedisReader is what CollectStatus reads of Redis itself
// (queues/redisinfo): its durability settings and topology.
type RedisReader interface {
	CheckDurability(ctx context.Context) redisinfo.Durability
	Topology(ctx context.Context) redisinfo.Topology
}

// AttemptLedger is what the attempts endpoint reads besides the job: the
// usage entries of its attempts.
type AttemptLedger interface {
	JobUsage(ctx context.Context, j jobs.Job) (out []usage.AttemptUsage, complete bool, err error)
}

// FlowDesk is what the sweep and pipeline endpoints need of the flows
// store: the controller's readers and cancellers of sweeps and runs, and
// the lists. The jobs of runs and sweeps they reach through the job store
// (controller.FlowJobs).
type FlowDesk interface {
	controller.SweepReader
	controller.SweepCanceller
	controller.RunCanceller
	ListSweeps(ctx context.Context, limit int) ([]string, error)
	ListRuns(ctx context.Context, pipelineName string, limit int) ([]flows.Run, error)
}

// StatusReader is what CollectStatus reads of the job store: the
// cluster's shape and health, never a job's body.
type StatusReader interface {
	QueueStats(ctx context.Context) ([]queues.QueueStats, error)
	List(ctx context.Context, o queues.ListOptions) ([]jobs.Job, error)
	ActiveJobs(ctx context.Context) ([]jobs.Job, error)
	ReadEpoch(ctx context.Context) (queues.Epoch, *queues.DataLoss, error)
}
