package workers

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/logs"
	"github.com/redis/go-redis/v9"
)

// The worker's view of the job store, one interface per concern, each a
// field of Worker: a reader of, say, the gang code sees in the type that
// it reaches the store only through GangMember. New takes the concrete
// store and hands each concern its part; queues.Store implements them
// all (stores_test.go checks it).

// DeliverySource takes deliveries off the queues and claims them: the
// taker, the asynq consumers (hence Redis) and admission. It reads a job
// but never ends one.
type DeliverySource interface {
	Take(ctx context.Context, r queues.TakeRequest) (queues.Took, error)
	ForwardDue(ctx context.Context, qs []queues.Queue) (int, error)
	CanTake() bool
	Redis() redis.UniversalClient
	ClaimBy(ctx context.Context, d queues.Delivery, c queues.Claimant) (jobs.Job, bool, error)
	AttemptState(ctx context.Context, jobID string) (jobs.State, int, error)
	Get(ctx context.Context, id string) (jobs.Job, error)
}

// AttemptRecorder records how a claimed attempt went: its end, a
// requeue, QoS, reported metrics and the worker's own preemption asks.
type AttemptRecorder interface {
	Finish(ctx context.Context, j jobs.Job, worker string, state jobs.State, exitCode *int, errMsg string) (bool, error)
	Refinish(ctx context.Context, e queues.Ended) (bool, error)
	Requeue(ctx context.Context, j jobs.Job, worker string, r queues.Requeue) (queues.Requeued, error)
	RequeueUnrecorded(ctx context.Context, w queues.WorkerInfo, attempts []queues.Delivery) ([]queues.Recovered, error)
	RecordQoS(ctx context.Context, j jobs.Job, worker string, st jobs.QoSStats) (bool, error)
	ReportMetric(ctx context.Context, j jobs.Job, worker string, v float64) (bool, error)
	RequestPreempt(ctx context.Context, jobID string, attempt int, to queues.Queue, reason string) (bool, error)
	RequestSpotPreempt(ctx context.Context, jobID string, attempt int, to queues.Queue, reason string) (bool, error)
}

// GangMember is one member's side of the gang protocol: claim its place,
// wait for the others, end or abandon, and ask for a hand-over.
type GangMember interface {
	ClaimMember(ctx context.Context, d queues.Delivery, n int, worker string, incarnation string, coord string) (jobs.Job, bool, error)
	GangHeld(ctx context.Context, jobID string, attempt int, n int) (bool, error)
	GangStarted(ctx context.Context, jobID string, attempt int) (queues.GangState, error)
	FinishMember(ctx context.Context, j jobs.Job, worker string, member int, state jobs.State, exitCode *int, errMsg string) (queues.MemberEnd, error)
	AbandonMember(ctx context.Context, jobID string, attempt int, worker string, reason string) (int, error)
	RequestGangHandOver(ctx context.Context, jobID string, attempt int, to queues.Queue, reason string) (bool, error)
}

// CheckpointBook records the checkpoints an attempt reports and uploads,
// and forgets them when the job ends.
type CheckpointBook interface {
	Checkpoint(ctx context.Context, j jobs.Job, worker string, checkpoint string) (bool, error)
	CheckpointLedger(worker string) *queues.CheckpointLedger
	RecordCheckpointUpload(ctx context.Context, took time.Duration) error
	ForgetCheckpoints(ctx context.Context, jobID string) (bool, error)
}

// WorkerRegistry is the worker's membership: register, beat, leave, and
// watch the namespace's epoch for a data loss.
type WorkerRegistry interface {
	queues.EpochChecker
	Register(ctx context.Context, w queues.WorkerInfo) (queues.Beat, error)
	Heartbeat(ctx context.Context, w queues.WorkerInfo, running []queues.Delivery) (queues.Beat, error)
	Leave(ctx context.Context, id string, incarnation string) ([]queues.Recovered, error)
	Namespace() queues.Namespace
}

// LogAppender keeps an attempt's output lines: all an output needs.
type LogAppender interface {
	AppendLogs(ctx context.Context, jobID string, lines []logs.Line, max int64) error
}
