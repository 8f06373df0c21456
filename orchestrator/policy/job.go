package policy

import (
	"time"

	"github.com/ballastdev/ballast/jobs"
)

// Queue names a queue a job waits in. The first three are the asynq queues
// the workers consume.
type Queue string

// The queues.
const (
	// QueueCore is consumed by fixed workers first.
	QueueCore Queue = "core"
	// QueueLoan holds burst jobs lent to fixed quota; fixed workers take it
	// after core.
	QueueLoan Queue = "loan"
	// QueueBurst is consumed by elastic workers.
	QueueBurst Queue = "burst"
	// QueueOverflow holds core jobs that rule 7 sent to one on-demand pool,
	// named by Job.Pool. How that pool is fed is the controller's choice.
	QueueOverflow Queue = "overflow"
)

// Job is one non-terminal job as the policy sees it.
type Job struct {
	ID    string
	Class jobs.Class
	// State is jobs.StateQueued (pending) or jobs.StateRunning; Decide
	// ignores anything else.
	State jobs.State
	// Queue is where a queued job waits. For a running job it is where it
	// was taken from and is not used.
	Queue Queue
	// Worker runs the job (running jobs only).
	Worker string
	// Pool is the pool of Worker for a running job, and the target pool for
	// a job in QueueOverflow. Decide trusts the worker's pool over this one.
	Pool string
	// Checkpointable jobs can be stopped and resumed: only they are migrated
	// and only they (if also Retryable) go to spot.
	Checkpointable bool
	Retryable      bool
	// Home is which elastic queue a queued burst job waits in, where the
	// snapshot has several (see ElasticHome); Queue is QueueBurst for all
	// of them.
	Home ElasticHome
	// SpotPreemptions counts spot reclaims the job suffered.
	SpotPreemptions int
	// Region pins the job to pools in one region; empty means any.
	Region string
	// SubmittedAt breaks ties between jobs queued at the same moment.
	SubmittedAt time.Time
	// QueuedAt is when the current attempt was queued: the queue order, and
	// the start of a core job's wait for rule 7.
	QueuedAt time.Time
	// MaxWait, when HasMaxWait is set, is how long this core job may wait
	// from QueuedAt before rule 7, in place of Config.CoreMaxWait: a
	// template's or pipeline step's own delay, or what a step's deadline
	// leaves. Zero then means "overflow at once", which is why the flag is
	// apart from the value. Config.CoreOverflow still switches rule 7 on.
	MaxWait    time.Duration
	HasMaxWait bool
	StartedAt  time.Time
	// LastCheckpointAt is the job's last checkpoint, zero if none: what a
	// stop loses is the work since then.
	LastCheckpointAt time.Time
	// PendingAction is a move of this job that the controller has issued
	// and that has not completed (the checkpoint is being written, or the
	// requeue is not yet visible). Decide counts the job where it is going
	// and plans nothing more for it. The controller clears it when the move
	// lands; Apply sets it.
	PendingAction ActionKind
}

// maxWait is how long the job may wait for fixed quota before rule 7.
func (j *Job) maxWait(c Config) time.Duration {
	if j.HasMaxWait {
		return j.MaxWait
	}
	return c.CoreMaxWait
}

func (j *Job) queued() bool  { return j.State == jobs.StateQueued }
func (j *Job) running() bool { return j.State == jobs.StateRunning }

// free reports whether the policy may plan a move for the job.
func (j *Job) free() bool { return j.PendingAction == "" }

// destination is the queue the job is in or, with a move in flight, the
// queue it is going to; "" for a running job that is staying put.
func (j *Job) destination() Queue {
	switch j.PendingAction {
	case Lend:
		return QueueLoan
	case Unlend, Reclaim:
		return QueueBurst
	case Migrate:
		if j.Class == jobs.ClassCore {
			return QueueCore
		}
		return QueueLoan
	case Overflow:
		return QueueOverflow
	}
	if j.queued() {
		return j.Queue
	}
	return ""
}

// spotEligible reports whether losing the worker costs the job little: it
// resumes from a checkpoint, may be run again, and has not already been
// reclaimed too often. Core jobs are never eligible.
func (j *Job) spotEligible(maxPreemptions int) bool {
	return j.Class == jobs.ClassBurst && j.Checkpointable && j.Retryable &&
		j.SpotPreemptions < maxPreemptions
}

// since is the start of the work a stop would lose: the last checkpoint if
// the job can resume from it, otherwise the start of the attempt.
func (j *Job) since() time.Time {
	if j.Checkpointable && j.LastCheckpointAt.After(j.StartedAt) {
		return j.LastCheckpointAt
	}
	return j.StartedAt
}

// fitsRegion reports whether the job may run in region. A pinned job never
// goes to a pool whose region is not declared.
func (j *Job) fitsRegion(region string) bool {
	return j.Region == "" || j.Region == region
}
