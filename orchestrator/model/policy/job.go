package policy

import (
	"math"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
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
	// QueueHeld holds core jobs waiting for rule 9 to admit them to core
	// when shares are on; no worker reads it.
	QueueHeld Queue = "held"
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
	// Readmitted marks a job sent back to its queue after it was admitted
	// once (worker lost or drained, preempted, delivery held): its queue
	// serves it before every job never taken, readmitted jobs among
	// themselves by SubmittedAt (see byQueueOrder), as the live queues do.
	Readmitted bool
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
	// Slots is how many slots each member of the job holds on its
	// worker; 0 or 1 means one.
	Slots int
	// Replicas is how many members a gang has: n > 1 members of Slots
	// each, started together, all in one region. 0 or 1 means a single
	// job.
	Replicas int
	// CPUs and Memory (bytes) are what each member needs of its worker
	// besides slots; 0 means not accounted.
	CPUs   float64
	Memory int64
	// Requires are labels every worker of the job must carry with the
	// same value (such as gpu_model: A100-80GB).
	Requires map[string]string
	// Share, when > 0, is the thousandths of one GPU a one-slot job uses
	// (gpu_share): jobs sharing a GPU pack onto one slot, so a worker's
	// running shares count as the whole slots they fill at the least
	// (their sum rounded up), not one slot each. 0 is whole slots.
	Share int
	// Placed is, for a sized job, the worker of each member (len is the
	// number of members): for a queued job, where rule 8 placed it, whose
	// workers hold its slots (as busy) until they free; for a running
	// one, where its members run, Worker being member 0's. The policy
	// plans nothing more for a queued placed job, except rule 8's: it
	// moves a reservation, and takes back a placement its workers will
	// never start (Unplace, pending with Placed kept). Unsized jobs
	// leave it empty.
	Placed []string
	// PlacedAt is when a queued placed job was placed: one waiting long
	// is a reservation rule 8 may move where it fits now.
	PlacedAt time.Time
	// PendingAction is a move of this job that the controller has issued
	// and that has not completed (the checkpoint is being written, or the
	// requeue is not yet visible). Decide counts the job where it is going
	// and plans nothing more for it. The controller clears it when the move
	// lands; Apply sets it.
	PendingAction ActionKind
	// Team is the team the job runs for: whose share it uses (rule 9).
	Team string
	// Grace is how long the job has to checkpoint and stop once told to;
	// with Config.Tick it decides whether the job may borrow a share.
	Grace time.Duration
	// NotBefore is when a queued job may start (a retry's back-off); rule
	// 9 admits a held job only once it has passed, so that a job waiting
	// out its back-off does not count as in-share work that waits.
	NotBefore time.Time
	// Rebalanced counts how often rule 9's optional rebalancing between
	// borrowers preempted this job.
	Rebalanced int
}

// slots is the slots of one member, at least 1.
func (j *Job) slots() int { return max(j.Slots, 1) }

// milliSlots is what the job counts for in a team's use of the fixed
// quota (rule 9), in thousandths of a slot: its weight, or its share of
// one GPU. Thousandths keep the sums exact.
func (j *Job) milliSlots() int64 {
	if j.Share > 0 {
		return int64(j.Share)
	}
	return int64(j.weight()) * 1000
}

// replicas is the number of members, at least 1.
func (j *Job) replicas() int { return max(j.Replicas, 1) }

// weight is the slots the whole job holds: what every count of the
// policy adds for it. One for an unsized job.
func (j *Job) weight() int { return j.slots() * j.replicas() }

// sized reports whether the job is more than one plain slot: it then
// starts only through rule 8's Place, never from a queue workers read.
func (j *Job) sized() bool {
	return j.Slots > 1 || j.Replicas > 1 || j.CPUs > 0 || j.Memory > 0 || len(j.Requires) > 0
}

// waitsPlaced reports whether the job is queued and already placed.
func (j *Job) waitsPlaced() bool { return j.queued() && len(j.Placed) > 0 }

// gang reports whether the job has several members.
func (j *Job) gang() bool { return j.Replicas > 1 }

// milliCPU is one member's CPUs in thousandths, so sums stay exact.
func (j *Job) milliCPU() int64 { return milli(j.CPUs) }

func milli(c float64) int64 {
	if !(c > 0) {
		return 0
	}
	return int64(math.Round(c * 1000))
}

// slotsOn is how many slots the job holds on worker id: Slots for each
// member placed there, or one slot on Worker for a running job that
// lists no members.
func (j *Job) slotsOn(id string) int {
	if len(j.Placed) == 0 {
		if j.running() && j.Worker == id {
			return j.slots()
		}
		return 0
	}
	n := 0
	for _, w := range j.Placed {
		if w == id {
			n += j.slots()
		}
	}
	return n
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
	case Admit:
		return QueueCore
	case Unlend:
		return QueueBurst
	case Reclaim:
		// A core job is only reclaimed under team shares (rule 9): it
		// goes back to wait for admission, not to elastic capacity.
		if j.Class == jobs.ClassCore {
			return QueueHeld
		}
		return QueueBurst
	case Migrate:
		if j.Class == jobs.ClassCore {
			return QueueCore
		}
		return QueueLoan
	case Repack:
		return QueueBurst
	case Overflow:
		return QueueOverflow
	}
	if j.queued() {
		return j.Queue
	}
	return ""
}

// leaves reports whether a stop of the running job is in flight: it
// checkpoints and leaves its worker's slots.
func (j *Job) leaves() bool {
	return j.PendingAction == Reclaim || j.PendingAction == Migrate || j.PendingAction == Repack
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

// due reports whether the job's back-off, if any, has passed at now.
func (j *Job) due(now time.Time) bool { return !j.NotBefore.After(now) }
