package queues

import "fmt"

// Queue is a logical queue name. Fixed workers consume core then loan (strict
// priority); on-demand workers consume ondemand then burst; spot workers
// consume burst only.
type Queue string

// The three logical queues.
const (
	QueueCore  Queue = "core"
	QueueLoan  Queue = "loan"
	QueueBurst Queue = "burst"
	// QueueOnDemand holds burst work that must not run on spot capacity:
	// jobs that cannot checkpoint or retry, or that spot has taken from too
	// often. Only on-demand workers serve it.
	QueueOnDemand Queue = "ondemand"
)

// Queues lists every logical queue.
var Queues = []Queue{QueueCore, QueueLoan, QueueBurst, QueueOnDemand}

// Valid reports whether q is one of the logical queues.
func (q Queue) Valid() bool {
	for _, k := range Queues {
		if q == k {
			return true
		}
	}
	return false
}

// DefaultNamespace is the namespace of a production install.
const DefaultNamespace = "ballast"

// Namespace owns every Redis key and asynq queue name of one Ballast install,
// so several installs (or parallel tests) can share one Redis.
type Namespace struct{ name string }

// NewNamespace returns the namespace called name ("" means DefaultNamespace).
func NewNamespace(name string) Namespace {
	if name == "" {
		name = DefaultNamespace
	}
	return Namespace{name: name}
}

// Name returns the namespace's name.
func (n Namespace) Name() string { return n.name }

// AsynqQueue is the asynq queue that carries q. The default namespace uses the
// bare names (core, loan, burst) so operators recognise them in asynq tools.
func (n Namespace) AsynqQueue(q Queue) string {
	if n.name == DefaultNamespace {
		return string(q)
	}
	return n.name + "." + string(q)
}

// LogicalQueue maps an asynq queue name back to its logical queue.
func (n Namespace) LogicalQueue(asynqName string) (Queue, bool) {
	for _, q := range Queues {
		if n.AsynqQueue(q) == asynqName {
			return q, true
		}
	}
	return "", false
}

func (n Namespace) prefix() string { return n.name + ":" }

// Job is the hash holding a job record.
func (n Namespace) Job(id string) string { return n.prefix() + "job:" + id }

// JobLog is the stream holding a job's output lines.
func (n Namespace) JobLog(id string) string { return n.prefix() + "job:" + id + ":log" }

// JobIndex is the sorted set of job IDs by creation time (ms).
func (n Namespace) JobIndex() string { return n.prefix() + "jobs" }

// ActiveJobs is the sorted set of jobs not yet ended (score: ms created):
// the controller's snapshot reads it instead of the whole history.
func (n Namespace) ActiveJobs() string { return n.prefix() + "active" }

// Idempotency maps an idempotency key to "jobID|fingerprint".
func (n Namespace) Idempotency(key string) string { return n.prefix() + "idem:" + key }

// Outbox is the sorted set of job IDs whose current attempt is queued in the
// record but whose asynq task is not yet confirmed (score: ms queued).
func (n Namespace) Outbox() string { return n.prefix() + "outbox" }

// Workers is the sorted set of live worker IDs by last heartbeat (ms).
func (n Namespace) Workers() string { return n.prefix() + "workers" }

// Worker is the hash describing one worker.
func (n Namespace) Worker(id string) string { return n.prefix() + "worker:" + id }

// WorkerJobs is the set of job IDs a worker has claimed and not finished.
func (n Namespace) WorkerJobs(id string) string { return n.prefix() + "worker:" + id + ":jobs" }

// WorkerTombstone marks a worker the controller declared dead, so that if it
// was only slow it learns it has been fenced off.
func (n Namespace) WorkerTombstone(id string) string { return n.prefix() + "worker:" + id + ":dead" }

// Leader is the controller leader lease.
func (n Namespace) Leader() string { return n.prefix() + "leader" }

// TaskID is the asynq task ID of one attempt. Unique per attempt, so an
// enqueue can be repeated safely: asynq refuses a second task with the ID.
func TaskID(jobID string, attempt int) string { return fmt.Sprintf("%s:%d", jobID, attempt) }
