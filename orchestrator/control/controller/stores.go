package controller

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/usage"
)

// The controller's view of the job store, one interface per concern.
// Each lists only the calls its users make, so a reader sees what a
// piece of the controller can touch, and a test can hand it a fake of a
// few methods instead of a whole Redis store. queues.Store implements
// them all but those of runs and sweeps, which flows.Store implements,
// LaunchBook, which the accounting store (queues/usage) keeps, WorkerBook
// (queues/registry) and LeaderLease (queues/leader) (stores_test.go
// checks each).

// LeaderLease takes and gives up the controller's leadership
// (leader.Store): only the tick loop calls it, and only for the lease.
type LeaderLease interface {
	Acquire(ctx context.Context, candidate string, ttl time.Duration) (bool, error)
	Resign(ctx context.Context, candidate string) error
}

// WorkerRecoverer gives back the deliveries of workers that died and
// readmits held ones: the dead-worker sweep and the held-delivery pass
// need these and nothing else.
type WorkerRecoverer interface {
	RecoverDeadWorkers(ctx context.Context, ttl time.Duration) ([]queues.Recovered, error)
	RecoverWorker(ctx context.Context, id string) ([]queues.Recovered, error)
	Get(ctx context.Context, id string) (jobs.Job, error)
	Readmit(ctx context.Context, jobID string, attempt int, to queues.Queue, reason string) (int, error)
	HeldDeliveries(ctx context.Context) ([]queues.HeldDelivery, error)
}

// DataLossWatcher notices that Redis lost its data (the epoch watch and
// the holdings it counts) and records the loss once; it never repairs.
type DataLossWatcher interface {
	queues.EpochChecker
	Holdings(ctx context.Context) (jobs int64, outbox int64, err error)
	RecordDataLoss(ctx context.Context, l queues.DataLoss) (bool, error)
}

// Housekeeper trims what the store keeps beside the jobs (the outbox and
// the job index) on the leader's timer.
type Housekeeper interface {
	ReconcileOutbox(ctx context.Context, grace time.Duration, batch int) (int, error)
	TrimIndex(ctx context.Context) error
	Namespace() queues.Namespace
}

// ControllerStore is what the tick loop holds of the job store: the
// three concerns above, nothing of pipelines, sweeps or placement, which
// have their own; the lease is a dependency of its own (Options.Lease).
type ControllerStore interface {
	WorkerRecoverer
	DataLossWatcher
	Housekeeper
}

// JobMover moves and places deliveries between queues and workers: the
// hybrid loop's hand on a job, with no reading of records.
type JobMover interface {
	Move(ctx context.Context, jobID string, attempt int, to queues.Queue, reason string) (int, error)
	AdmitHeld(ctx context.Context, jobID string, attempt int, reason string) (int, error)
	MovePlacement(ctx context.Context, jobID string, attempt int, workers []string) (int, error)
	Place(ctx context.Context, jobID string, attempt int, workers []string) (int, error)
}

// ActiveReader reads which jobs are active and on which workers: with the
// registry's workers (WorkerBook), what the hybrid loop builds its
// snapshot from.
type ActiveReader interface {
	ActiveChanges(ctx context.Context, workers []string, endedSince time.Time, addedSince time.Time) (queues.Membership, error)
	ActiveIndex(ctx context.Context) ([]string, time.Time, error)
	ActiveJobs(ctx context.Context) ([]jobs.Job, error)
	ActiveJobsOf(ctx context.Context, ids []string, spec func(id string) (jobs.Spec, bool)) (map[string]jobs.Job, error)
	ActiveMembership(ctx context.Context, workers []string, endedSince time.Time) (queues.Membership, error)
}

// LaunchBook records elastic launches until their workers register or
// the launch ends: the provider side of the hybrid loop, kept with the
// cost records (usage.Store), which bill each worker from its launch.
type LaunchBook interface {
	PendingLaunches(ctx context.Context) ([]usage.Launch, error)
	RecordLaunches(ctx context.Context, ls []usage.Launch) error
	EndLaunch(ctx context.Context, id string, end time.Time) (bool, error)
}

// WorkerSignaller asks the worker of a running attempt to checkpoint it
// and move it; it only writes the request, the worker acts on it. The
// requests for a whole worker (drain, spot notice) are the registry's
// (WorkerBook).
type WorkerSignaller interface {
	RequestPreempt(ctx context.Context, jobID string, attempt int, to queues.Queue, reason string) (bool, error)
}

// WorkerBook is the worker registry (queues/registry): the registered
// workers, and the intents for a whole worker, drain and spot notice,
// which the worker acts on at its next beat.
type WorkerBook interface {
	Workers(ctx context.Context) ([]queues.WorkerInfo, error)
	RequestDrain(ctx context.Context, id string) error
	RequestSpotNotice(ctx context.Context, id string, deadline time.Time) error
}

// HybridStore is what the hybrid loop holds of the job store: the three
// concerns above; its launch book and the worker registry are
// dependencies of their own (Hybrid.Launches, Hybrid.Registry).
type HybridStore interface {
	JobMover
	ActiveReader
	WorkerSignaller
}

// JobSubmitter enqueues new jobs, one or a batch: all the submitter does.
type JobSubmitter interface {
	Submit(ctx context.Context, spec jobs.Spec, q queues.Queue) (queues.Submitted, error)
	SubmitBatchEach(ctx context.Context, items []queues.BatchItem, each func(lo int, res []queues.BatchResult)) error
}

// RunBook keeps pipeline runs and their steps (flows.Store): what the
// pipelines loop reads and writes of runs. It embeds RunCanceller for
// the late run; the steps' jobs are reached through StepJobs.
type RunBook interface {
	RunCanceller
	ActiveRuns(ctx context.Context) ([]flows.Run, error)
	CreateRun(ctx context.Context, nr flows.NewRun) (run flows.Run, created bool, err error)
	HandledUntil(ctx context.Context, pipelineName string) (time.Time, error)
	MarkDeadlineMissed(ctx context.Context, runID string) (bool, error)
	MarkHandled(ctx context.Context, pipelineName string, scheduled time.Time) (bool, error)
	SetStepStates(ctx context.Context, runID string, states map[string]pipeline.StepState) (bool, error)
	StartStep(ctx context.Context, runID string, step string, jobID string) (bool, error)
	StepJobs(ctx context.Context, pipelineName string, step string, runs int) ([]string, error)
}

// RunCanceller ends one run, for CancelRun; the jobs of its steps are
// cancelled through a FlowJobs.
type RunCanceller interface {
	EndRun(ctx context.Context, runID string, state pipeline.RunOutcome, reason string) (ended bool, orphans []string, err error)
	GetRun(ctx context.Context, id string) (flows.Run, error)
}

// FlowJobs is what runs and sweeps do to the jobs of their steps and
// trials, which the job store keeps: read where they are, cancel them.
type FlowJobs interface {
	Cancel(ctx context.Context, id string) (queues.CancelResult, error)
	JobBriefs(ctx context.Context, ids []string) (map[string]queues.JobBrief, error)
}

// StepJobs is the pipelines loop's view of its steps' jobs: FlowJobs and
// how long a step's past jobs ran, for a deadline's latest start.
type StepJobs interface {
	FlowJobs
	RunTimes(ctx context.Context, ids []string) ([]time.Duration, error)
}

// TrialJobs is the sweeps loop's view of its trials' jobs: FlowJobs, the
// metrics the median rule decides on, and the jobs that trials'
// idempotency keys name (a fan-out that died before recording them).
type TrialJobs interface {
	FlowJobs
	JobsByKey(ctx context.Context, keys []string) (map[string]string, error)
	Metrics(ctx context.Context, jobIDs []string) (map[string][]float64, error)
}

// SweepBook keeps sweeps and their trials (flows.Store): what the sweeps
// loop reads and writes of them.
type SweepBook interface {
	ActiveSweeps(ctx context.Context) ([]string, error)
	CreateSweep(ctx context.Context, ns flows.NewSweep) (rec flows.SweepRecord, duplicate bool, err error)
	FinishSweep(ctx context.Context, sweepID string, state flows.SweepState) (bool, error)
	GetSweep(ctx context.Context, id string) (flows.SweepRecord, error)
	RecordTrials(ctx context.Context, sweepID string, jobsByIndex map[int]string, cursor int) (flows.SweepState, error)
	StopTrial(ctx context.Context, sweepID string, i int) error
	TrialSpecs(ctx context.Context, sweepID string, from int, to int) ([]jobs.Spec, error)
}

// SweepCanceller cancels one sweep, for CancelSweep; its trials' jobs are
// cancelled through a FlowJobs.
type SweepCanceller interface {
	CancelSweep(ctx context.Context, sweepID string) (bool, error)
	GetSweep(ctx context.Context, id string) (flows.SweepRecord, error)
}

// SweepReader reads one sweep with its trials' specs, for LoadSweepView.
type SweepReader interface {
	GetSweep(ctx context.Context, id string) (flows.SweepRecord, error)
	TrialSpecs(ctx context.Context, sweepID string, from int, to int) ([]jobs.Spec, error)
}

// DurabilityChecker reads how Redis persists data (redisinfo.Store), for
// CheckRedis.
type DurabilityChecker interface {
	CheckDurability(ctx context.Context) redisinfo.Durability
}

// DataLossRecoverer restores from a snapshot and acknowledges a recorded
// loss: the recovery command's whole reach into the store.
type DataLossRecoverer interface {
	AckDataLoss(ctx context.Context) (*queues.DataLoss, error)
	Get(ctx context.Context, id string) (jobs.Job, error)
	ReadEpoch(ctx context.Context) (queues.Epoch, *queues.DataLoss, error)
	Restore(ctx context.Context, r queues.Restoring) (res queues.Restored, other string, err error)
}
