package workers

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/queues/gangs"
	"github.com/ballastdev/ballast/queues/logs"
	"github.com/redis/go-redis/v9"
)

// The worker's view of the job store, one interface per concern, each a
// field of Worker: a reader of, say, the output code sees in the type that
// it reaches the store only through LogAppender. New takes the concrete
// store and hands each concern its part; queues.Store implements them
// all (stores_test.go checks it), except GangJoiner, the gang store's
// (queues/gangs), LogAppender (queues/logs) and CheckpointBook
// (queues/checkpoints).

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

// AttemptRecorder records how a claimed attempt went: its end (a gang
// member's too), a requeue, QoS, reported metrics, the checkpoint token
// the job reports and the worker's own preemption asks (a gang's
// hand-over to member 0 too). A gang member's end and hand-over stay with
// the kernel's because they change the job record in the same script as
// any other end or preemption ask; so does the reported token, which the
// kernel's ends and requeues read.
type AttemptRecorder interface {
	Checkpoint(ctx context.Context, j jobs.Job, worker string, checkpoint string) (bool, error)
	Finish(ctx context.Context, j jobs.Job, worker string, state jobs.State, exitCode *int, errMsg string) (bool, error)
	FinishMember(ctx context.Context, j jobs.Job, worker string, member int, state jobs.State, exitCode *int, errMsg string) (queues.MemberEnd, error)
	Refinish(ctx context.Context, e queues.Ended) (bool, error)
	Requeue(ctx context.Context, j jobs.Job, worker string, r queues.Requeue) (queues.Requeued, error)
	RequeueUnrecorded(ctx context.Context, w queues.WorkerInfo, attempts []queues.Delivery) ([]queues.Recovered, error)
	RecordQoS(ctx context.Context, j jobs.Job, worker string, st jobs.QoSStats) (bool, error)
	ReportMetric(ctx context.Context, j jobs.Job, worker string, v float64) (bool, error)
	RequestPreempt(ctx context.Context, jobID string, attempt int, to queues.Queue, reason string) (bool, error)
	RequestSpotPreempt(ctx context.Context, jobID string, attempt int, to queues.Queue, reason string) (bool, error)
	RequestGangHandOver(ctx context.Context, jobID string, attempt int, to queues.Queue, reason string) (bool, error)
}

// GangJoiner gives a gang delivery its member, whose Join runs the
// member's side of the gang protocol from claim to start (gang.go).
type GangJoiner interface {
	Member(d queues.Delivery, who gangs.Joiner) *gangs.Member
}

// CheckpointBook is the ledger of the checkpoints an attempt uploads
// (queues/checkpoints): it commits them, notes how long each upload took,
// and forgets them when the job ends.
type CheckpointBook interface {
	Ledger(worker string) *checkpoints.Ledger
	RecordUpload(ctx context.Context, took time.Duration) error
	Forget(ctx context.Context, jobID string) (bool, error)
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
