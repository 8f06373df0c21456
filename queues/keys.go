package queues

import (
	"strconv"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Queue is a logical queue name. Fixed workers consume core then loan (strict
// priority); on-demand workers consume overflow, then ondemand, then burst;
// spot workers consume burst only. The queues elastic workers read also have
// regional forms (RegionalQueue) for jobs pinned to a region: only elastic
// workers of that region consume them.
type Queue string

// The six base logical queues.
const (
	QueueCore  Queue = "core"
	QueueLoan  Queue = "loan"
	QueueBurst Queue = "burst"
	// QueueOnDemand holds burst work that must not run on spot capacity:
	// jobs that cannot checkpoint or retry, or that spot has taken from too
	// often. Only on-demand workers serve it.
	QueueOnDemand Queue = "ondemand"
	// QueueOverflow holds core work that waited too long for fixed quota and
	// that the controller sent to on-demand capacity (rule 7). On-demand
	// workers read it before anything else, since the job has already waited
	// its allowed delay; spot and fixed workers never read it.
	QueueOverflow Queue = "overflow"
	// QueueHeld holds core jobs of teams with shares until the policy
	// admits them to core (rule 9). No worker reads it.
	QueueHeld Queue = "held"
)

// Queues lists every base logical queue (regional forms are made on demand).
var Queues = []Queue{QueueCore, QueueLoan, QueueBurst, QueueOnDemand, QueueOverflow, QueueHeld}

// regionSep joins a base queue and a region. "@" is not used by namespaces
// (which join with ".") nor by region names, so a regional name splits back
// unambiguously, and it is legal in asynq queue names and Redis keys.
const regionSep = "@"

// MaxRegionLen is the longest region name a regional queue accepts.
const MaxRegionLen = 32

// ValidRegion reports whether region can name a regional queue: 1 to
// MaxRegionLen characters of a-z, 0-9 and "-". The limit keeps queue names,
// and so asynq's Redis keys, short and free of separators.
func ValidRegion(region string) bool {
	if region == "" || len(region) > MaxRegionLen {
		return false
	}
	for _, c := range region {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// RegionalQueue is the form of base reserved for jobs pinned to region
// ("burst@eu-1"). An empty region means "not pinned" and returns base, so
// callers can pass a job's region label as is. The result is only Valid for
// an elastic base and a valid region name.
func RegionalQueue(base Queue, region string) Queue {
	if region == "" {
		return base
	}
	return base + regionSep + Queue(region)
}

// Base returns the queue without its region: "burst" for "burst@eu-1", q
// itself for a base queue.
func (q Queue) Base() Queue {
	if i := strings.Index(string(q), regionSep); i >= 0 {
		return q[:i]
	}
	return q
}

// Region returns the region of a regional queue, "" for a base queue.
func (q Queue) Region() string {
	if i := strings.Index(string(q), regionSep); i >= 0 {
		return string(q[i+len(regionSep):])
	}
	return ""
}

// Elastic reports whether q (base or regional) holds burst work waiting for
// elastic workers: burst and ondemand. The overflow queue is read by elastic
// workers too but is not Elastic: it holds core work, which must never be
// sent back to burst nor reach spot (see Overflow).
func (q Queue) Elastic() bool {
	b := q.Base()
	return b == QueueBurst || b == QueueOnDemand
}

// Overflow reports whether q (base or regional) holds core work overflowed to
// on-demand capacity (rule 7).
func (q Queue) Overflow() bool { return q.Base() == QueueOverflow }

// Overflowed reports whether j's current attempt is core work overflowed to
// on-demand capacity: waiting in an overflow queue, or running from one (a
// running job's Queue is where its attempt was taken from). Status, the
// overview and the dashboard show such jobs apart, as they run at the
// on-demand premium.
func Overflowed(j jobs.Job) bool {
	return j.Spec.Class == jobs.ClassCore && Queue(j.Queue).Overflow() &&
		(j.State == jobs.StateQueued || j.State == jobs.StateRunning)
}

// Valid reports whether q is a queue a job may wait in: a base queue, or
// the regional form of burst, ondemand or overflow. Every one but held is
// consumed by some worker; the controller moves jobs out of held. core and loan have no
// regional form: fixed workers do not look for one, so a job sent there
// would wait forever.
func (q Queue) Valid() bool {
	base, region := q.Base(), q.Region()
	if base == q {
		for _, k := range Queues {
			if q == k {
				return true
			}
		}
		return false
	}
	return (q.Elastic() || q.Overflow()) && ValidRegion(region)
}

// ElasticQueues lists, in strict priority order, the queues an elastic worker
// of a pool in region consumes. Work pinned to the worker's own region comes
// first: no other worker may take it, whereas unpinned work can go anywhere.
// On-demand workers serve overflow first (core work that has already waited
// its allowed delay), then ondemand, then burst, as spot can take neither of
// the first two; spot workers serve burst only. An empty or invalid region
// adds no regional queue (no job can be pinned to an invalid one:
// Store.Submit refuses it).
func ElasticQueues(onDemand bool, region string) []Queue {
	regional := ValidRegion(region)
	var qs []Queue
	if onDemand {
		for _, base := range []Queue{QueueOverflow, QueueOnDemand} {
			if regional {
				qs = append(qs, RegionalQueue(base, region))
			}
			qs = append(qs, base)
		}
	}
	if regional {
		qs = append(qs, RegionalQueue(QueueBurst, region))
	}
	return append(qs, QueueBurst)
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
// bare names (core, loan, burst, burst@eu-1) so operators recognise them in
// asynq tools.
func (n Namespace) AsynqQueue(q Queue) string {
	if n.name == DefaultNamespace {
		return string(q)
	}
	return n.name + "." + string(q)
}

// LogicalQueue maps an asynq queue name of this namespace back to its logical
// queue, regional forms included. Names of other namespaces, and queues no
// worker consumes, are refused.
func (n Namespace) LogicalQueue(asynqName string) (Queue, bool) {
	name := asynqName
	if n.name != DefaultNamespace {
		var ok bool
		if name, ok = strings.CutPrefix(asynqName, n.name+"."); !ok {
			return "", false
		}
	}
	if q := Queue(name); q.Valid() {
		return q, true
	}
	return "", false
}

// Every key of a namespace starts with its hash tag, "{NAME}:", so that
// Redis Cluster puts them all in one slot: each script and MULTI touches
// keys of one namespace only, and so never spans slots. A script that
// derives a key from an ID (a job's from its ID in a worker's running set)
// is passed the prefix by its caller (JobPrefix, WorkerPrefix) and the
// suffixes below, so the key names are still all made here.
// Installs from before the tag used "NAME:" (LegacyPrefix); migrate-keys
// renames them.

// HashTag is the part of every key of the namespace Redis Cluster hashes.
func (n Namespace) HashTag() string { return "{" + n.name + "}" }

func (n Namespace) prefix() string { return n.HashTag() + ":" }

// Prefix starts every key of the namespace: a SCAN for Prefix()+"*"
// finds them all (braces are not glob characters).
func (n Namespace) Prefix() string { return n.prefix() }

// KeyPatterns are SCAN patterns that together match every key of the
// namespace: Ballast's, and asynq's for the namespace's queues (asynq tags
// each queue's keys with the queue's own name, "asynq:{NAME.core}:..."). The
// default namespace's asynq queues have bare names, shared by no pattern.
func (n Namespace) KeyPatterns() []string {
	return []string{n.Prefix() + "*", "asynq:{" + n.name + ".*"}
}

// replicationMark is the key a pipeline that waits for its replicas
// writes just before its WAIT (see replicaWait.add).
func (n Namespace) replicationMark() string { return n.prefix() + "replmark" }

// LegacyPrefix started every key of the namespace before keys carried a
// hash tag.
func (n Namespace) LegacyPrefix() string { return n.name + ":" }

// Suffixes of a job's and of a worker's secondary keys, for the scripts
// that derive them from the record's key (see keySuffixLua).
const (
	logSuffix         = ":log"
	metricsSuffix     = ":metrics"
	workerJobsSuffix  = ":jobs"
	tombstoneSuffix   = ":dead"
	incarnationSuffix = ":incarnation"
	departedSuffix    = ":departed"
)

// keySuffixLua gives scripts the suffixes above (gangLua includes it), so
// that a script deriving a job's log or a worker's running set names it
// exactly as keys.go does.
const keySuffixLua = `local logSuffix, metricsSuffix, workerJobsSuffix = "` +
	logSuffix + `", "` + metricsSuffix + `", "` + workerJobsSuffix + `"
`

// JobPrefix is Job(id) without the ID, for scripts that read records by
// the IDs they find in a set.
func (n Namespace) JobPrefix() string { return n.prefix() + "job:" }

// WorkerPrefix is Worker(id) without the ID, for scripts that reach the
// running sets of a gang's other members.
func (n Namespace) WorkerPrefix() string { return n.prefix() + "worker:" }

// Job is the hash holding a job record.
func (n Namespace) Job(id string) string { return n.JobPrefix() + id }

// JobLog is the stream holding a job's output lines.
func (n Namespace) JobLog(id string) string { return n.Job(id) + logSuffix }

// JobMetrics is the list of the metric values a job reported, oldest first.
// It expires with the job record (see finishScript and cancelScript).
func (n Namespace) JobMetrics(id string) string { return n.Job(id) + metricsSuffix }

// JobIndex is the sorted set of job IDs by creation time (ms).
func (n Namespace) JobIndex() string { return n.prefix() + "jobs" }

// ActiveJobs is the sorted set of jobs not yet ended (score: ms created):
// the controller's snapshot reads it instead of the whole history.
func (n Namespace) ActiveJobs() string { return n.prefix() + "active" }

// Departed is the sorted set of jobs that left the active index with no
// attempt ending then (score: ms they left): a queued job cancelled, a job
// whose cancel recovery carried out. A reader of the index's changes
// learns of those departures here; every other departure is an attempt's
// end, in the usage entries. Entries older than departedKeep are trimmed
// as new ones are written. Scripts name it from ActiveJobs (see
// departLua).
func (n Namespace) Departed() string { return n.ActiveJobs() + departedSuffix }

// Idempotency maps an idempotency key to "jobID|fingerprint".
func (n Namespace) Idempotency(key string) string { return n.prefix() + "idem:" + key }

// Outbox is the sorted set of job IDs whose current attempt is queued in the
// record but whose asynq task is not yet confirmed (score: ms queued).
func (n Namespace) Outbox() string { return n.prefix() + "outbox" }

// Workers is the sorted set of live worker IDs by last heartbeat (ms).
func (n Namespace) Workers() string { return n.prefix() + "workers" }

// Worker is the hash describing one worker.
func (n Namespace) Worker(id string) string { return n.WorkerPrefix() + id }

// Fields of a worker's hash (Worker) that hold the intents for the whole
// worker: queues/registry writes them, the heartbeat script hands them to
// the worker, and queues/gangs reads a drain. One name each here, so the
// three cannot drift apart; the values are the names stored in Redis.
const (
	// IntentDrainField is "1" once the worker is asked to drain.
	IntentDrainField = "intent_drain"
	// IntentSpotField is the spot notice's deadline (ms), the earliest
	// one asked.
	IntentSpotField = "intent_spot"
)

// WorkerJobs is the set of job IDs a worker has claimed and not finished.
func (n Namespace) WorkerJobs(id string) string { return n.Worker(id) + workerJobsSuffix }

// WorkerTombstone marks a worker the controller declared dead, so that if it
// was only slow it learns it has been fenced off.
func (n Namespace) WorkerTombstone(id string) string { return n.Worker(id) + tombstoneSuffix }

// WorkerIncarnation holds the token of the process currently registered
// under a worker ID: a process whose token differs is fenced, and a new one
// registering takes the ID over (see heartbeatScript).
func (n Namespace) WorkerIncarnation(id string) string {
	return n.Worker(id) + incarnationSuffix
}

// Leader is the controller leader lease.
func (n Namespace) Leader() string { return n.prefix() + "leader" }

// Started holds when a controller first led this namespace (ms): the first
// moment Ballast has records for, from which the quota is paid.
func (n Namespace) Started() string { return n.prefix() + "since" }

// Epoch holds the identity of this namespace's data in Redis ("ID|ms"):
// written once, by the first controller to find it missing, and never
// changed or deleted, so a process that saw one epoch and then finds none
// or another knows Redis lost what it held (see epoch.go).
func (n Namespace) Epoch() string { return n.prefix() + "epoch" }

// DataLoss holds the record of a detected loss of Redis data: written once
// when the loss is noticed, kept until an operator acknowledges it or
// recovery completes, so the loss is said by every status until then.
func (n Namespace) DataLoss() string { return n.prefix() + "data_lost" }

// series is the sorted set of the samples of a measured series.
func (n Namespace) series(name string) string { return n.prefix() + "series:" + name }

// Keys of usage records and worker lives (see usage.go and queues/usage).
func (n Namespace) usage() string    { return n.prefix() + "usage" }
func (n Namespace) lives() string    { return n.prefix() + "lives" }
func (n Namespace) livesEnd() string { return n.prefix() + "lives:end" }
func (n Namespace) launches() string { return n.prefix() + "launches" }

// TaskID is the asynq task ID of one attempt. Unique per attempt, so an
// enqueue can be repeated safely: asynq refuses a second task with the ID.
func TaskID(jobID string, attempt int) string { return jobID + ":" + strconv.Itoa(attempt) }
