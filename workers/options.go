package workers

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/gangs"
	"github.com/ballastdev/ballast/workers/checkpoint"
	"github.com/ballastdev/ballast/workers/gpu"
	"github.com/ballastdev/ballast/workers/isolation"
	"github.com/ballastdev/ballast/workers/runas"
)

// Options configures a Worker.
type Options struct {
	// Pool is the pool this worker belongs to ("fixed", "spot", ...).
	Pool string
	// Spot marks a worker of a spot pool. Only such a worker acts on a
	// spot notice recorded for it; the registry refuses one for any other
	// worker, and the worker checks again.
	Spot bool
	// Slots is how many jobs run at once.
	Slots int
	// GPUs, when set, makes this a GPU worker: its slots are these devices
	// (Slots defaults to their number and may not exceed it), each attempt
	// is bound to GPUs of its own (CUDA_VISIBLE_DEVICES), and the worker
	// reports them and its gpu_model label to the registry. Jobs that ask
	// for a share of a GPU are packed onto one device, which holds one
	// slot between them (see shares.go).
	GPUs []gpu.Device
	// MPS tells each job that shares a GPU its part of the GPU's compute
	// through CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, for machines that run
	// NVIDIA's MPS control daemon. Without MPS, jobs sharing a GPU take
	// turns on it and nothing holds one to its share.
	MPS bool
	// Labels describe the worker to placement (its pool's labels, from
	// config); a GPU worker adds gpu_model, which its GPUs decide.
	Labels map[string]string
	// CPUs and Memory (bytes) are what sized jobs that ask for cpus or
	// memory may take of this worker, reported for placement; 0 means the
	// machine's own (its CPUs, and MemTotal on Linux).
	CPUs   float64
	Memory int64
	// Queues are consumed in strict priority order: a later queue is served
	// only while every earlier one is empty. Fixed workers use core, loan;
	// elastic workers use queues.ElasticQueues of their kind and region.
	Queues []queues.Queue
	// ID names the worker in the registry ("" = host-pid-random).
	ID string
	// PollInterval is how often an idle worker looks for work (asynq's
	// TaskCheckInterval, whose 1s default makes idle start-up slow).
	PollInterval time.Duration
	// AsynqShared makes the worker consume its shared queues through
	// asynq's server, claiming each delivery after asynq hands it over, as
	// it must on Redis Cluster, instead of taking and claiming them in one
	// script (see taker.go). Tests set it to check both ways agree.
	AsynqShared bool
	// Heartbeat is the registry heartbeat period.
	Heartbeat time.Duration
	// WorkerTTL is the controller's worker TTL (controller.worker_ttl): a
	// worker whose registration is older is declared dead and its jobs
	// are requeued (default DefaultWorkerTTL). The worker needs it to
	// fence itself in time.
	WorkerTTL time.Duration
	// SelfFence is the share of WorkerTTL, counted from the last heartbeat
	// that reached Redis, after which the worker stops taking work and
	// stops its jobs (SIGTERM, then a kill half way to the TTL), so that a
	// worker cut off from Redis does not run on beside the attempts that
	// replace its own (see fence.go). 0 means DefaultSelfFence; a negative
	// value turns self-fencing off (for comparisons: a cut-off worker then
	// runs its jobs to the end, and the controller runs them again).
	SelfFence float64
	// DrainTimeout is how long a stopping worker lets running jobs finish
	// before it checkpoints and requeues them.
	DrainTimeout time.Duration
	// GangStartTimeout is how long a claimed gang member waits for a
	// member that no live worker holds before it moves the gang on
	// (default gangs.StartTimeout).
	GangStartTimeout time.Duration
	// LogDir keeps each attempt's full output; CheckpointDir holds a
	// directory per job (BALLAST_CHECKPOINT_DIR).
	LogDir        string
	CheckpointDir string
	// CheckpointStore, when set (config checkpoints.store), makes each
	// job's checkpoint directory travel: every checkpoint the job reports
	// is uploaded and committed (the token becomes the resume point only
	// then), and the newest committed checkpoint is restored into the
	// directory before an attempt starts (see ckstore.go). Nil keeps
	// checkpoints in CheckpointDir only. The caller owns the store.
	CheckpointStore *checkpoint.Store
	// CheckpointOptions tune the store's uploads, restores and collection.
	CheckpointOptions checkpoint.Options
	// LogLines is how many lines of each job's output are kept in Redis.
	LogLines int64
	// LogRetention is how long local log files are kept (default 7 days).
	LogRetention time.Duration
	// RetryBackoff is the delay before the first retry; it doubles per retry
	// up to MaxRetryBackoff.
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// Handlers are in-process Go handlers, by the name templates use.
	Handlers map[string]Handler
	// Events receives every state change (default events.Discard).
	Events events.Publisher
	// Control, when set, is a NATS connection on which the worker listens to
	// Subjects.Control(its ID) for wake-ups (NotifyControl): a preempt or
	// cancel request recorded in Redis is then acted on at once instead of
	// at the next heartbeat. The caller owns the connection.
	Control *nats.Conn
	// Subjects names the control subject (the zero value uses the default
	// prefix); it must match the controller's.
	Subjects events.Subjects
	// QoS holds the QoS groups and which job lands in which.
	QoS jobs.QoS
	// Isolation chooses how the groups are enforced: auto, v2, v1 or off.
	// The zero value is off, so a library user or a test gets no cgroups
	// unless it asks; `ballast worker` defaults to auto.
	Isolation isolation.Mode
	// CgroupRoot is where cgroup filesystems are mounted (default
	// /sys/fs/cgroup).
	CgroupRoot string
	// RunAs (worker.run_as) is the unprivileged user a worker running as
	// root starts command jobs as: a name, or UID:GID. The job's
	// supervisor switches to it, with its groups and no way back
	// (no_new_privs), so the job cannot read the worker's memory or
	// environment, where its credentials are. Empty runs jobs as the
	// worker's own user. In-process handlers run in the worker as ever.
	RunAs string
	// TemplateRunAs overrides RunAs for the jobs of the named templates
	// (templates.NAME.run_as).
	TemplateRunAs map[string]string
	// Logger (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now). Every time the worker reads
	// (event times, deadlines, the fence, how long since a thing) is
	// Now's, so a test can age what the records say by moving it. How
	// long the worker waits runs on the runtime's timers instead, which a
	// moved Now does not fire and testing/synctest fakes.
	Now func() time.Time
}

// WithDefaults returns a copy with every unset field filled in.
func (o Options) WithDefaults() Options {
	if o.Pool == "" {
		o.Pool = "fixed"
	}
	if o.CPUs == 0 {
		o.CPUs = float64(runtime.NumCPU())
	}
	if o.Memory == 0 {
		o.Memory = machineMemory()
	}
	if o.Slots == 0 {
		o.Slots = max(1, len(o.GPUs))
	}
	if len(o.Queues) == 0 {
		o.Queues = []queues.Queue{queues.QueueCore, queues.QueueLoan}
	}
	if o.ID == "" {
		host, _ := os.Hostname()
		o.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), randomHex(3))
	}
	if o.PollInterval == 0 {
		o.PollInterval = 25 * time.Millisecond
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = 500 * time.Millisecond
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = 5 * time.Minute
	}
	if o.WorkerTTL == 0 {
		o.WorkerTTL = DefaultWorkerTTL
	}
	if o.SelfFence == 0 {
		o.SelfFence = DefaultSelfFence
	}
	if o.GangStartTimeout <= 0 {
		o.GangStartTimeout = gangs.StartTimeout
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(os.TempDir(), "ballast", "logs")
	}
	if o.CheckpointDir == "" {
		o.CheckpointDir = filepath.Join(os.TempDir(), "ballast", "checkpoints")
	}
	if o.LogLines == 0 {
		o.LogLines = 10000
	}
	if o.LogRetention == 0 {
		o.LogRetention = 7 * 24 * time.Hour
	}
	if o.RetryBackoff == 0 {
		o.RetryBackoff = 5 * time.Second
	}
	if o.MaxRetryBackoff == 0 {
		o.MaxRetryBackoff = 10 * time.Minute
	}
	if o.Isolation == "" {
		o.Isolation = isolation.Off
	}
	o.QoS = o.QoS.WithDefaults()
	if o.Events == nil {
		o.Events = events.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Validate names every bad option.
func (o Options) Validate() error {
	var errs []error
	if o.Slots < 1 || o.Slots > 4096 {
		errs = append(errs, fmt.Errorf("slots: %d is out of range (1..4096)", o.Slots))
	}
	if len(o.GPUs) > 0 && o.Slots > len(o.GPUs) {
		errs = append(errs, fmt.Errorf("slots: %d is more than the worker's %d GPUs; on a GPU worker a slot is a GPU (leave slots unset to use them all)", o.Slots, len(o.GPUs)))
	}
	seenGPU := map[string]bool{}
	for _, d := range o.GPUs {
		if d.UUID == "" || seenGPU[d.UUID] {
			errs = append(errs, fmt.Errorf("gpus: GPU %d has an empty or repeated UUID %q", d.Index, d.UUID))
		}
		seenGPU[d.UUID] = true
	}
	seen := map[queues.Queue]bool{}
	for _, q := range o.Queues {
		if !q.Valid() {
			errs = append(errs, fmt.Errorf("queues: unknown queue %q (use core, loan, burst or ondemand, or burst@REGION or ondemand@REGION with a region of a-z, 0-9, \"-\")", q))
		}
		if q == queues.QueueHeld {
			// Held core work waits for the controller to admit it
			// within its team's share; a worker reading held would
			// run it past the shares.
			errs = append(errs, fmt.Errorf("queues: held is read by no worker: the controller admits its jobs to core"))
		}
		if seen[q] {
			errs = append(errs, fmt.Errorf("queues: %q is listed twice", q))
		}
		seen[q] = true
	}
	if _, err := isolation.ParseMode(string(o.Isolation)); err != nil {
		errs = append(errs, fmt.Errorf("isolation: %w", err))
	}
	if o.RunAs != "" {
		if err := runas.Check(o.RunAs); err != nil {
			errs = append(errs, fmt.Errorf("run_as: %w", err))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(o.TemplateRunAs)) {
		if err := runas.Check(o.TemplateRunAs[name]); err != nil {
			errs = append(errs, fmt.Errorf("templates.%s.run_as: %w", name, err))
		}
	}
	if o.PollInterval < time.Millisecond {
		errs = append(errs, fmt.Errorf("poll_interval: %s is below 1ms", o.PollInterval))
	}
	if o.Heartbeat <= 0 {
		errs = append(errs, errors.New("heartbeat: must be positive"))
	}
	if o.WorkerTTL < 0 {
		errs = append(errs, errors.New("worker_ttl: must not be negative"))
	}
	if o.SelfFence > MaxSelfFence {
		errs = append(errs, fmt.Errorf("self_fence: %g is above %g; the worker must stop its jobs well before the worker TTL runs out (use a share such as 0.75)", o.SelfFence, MaxSelfFence))
	}
	// Checked once defaults are in (New): a zero TTL or share is a default.
	if f := (fenceTiming{ttl: o.WorkerTTL, at: o.SelfFence}); f.on() && o.Heartbeat > 0 && f.fenceAfter() <= o.Heartbeat {
		errs = append(errs, fmt.Errorf("self_fence: %g of the worker TTL (%s) is %s, not more than one heartbeat (%s); the worker would stop its jobs between two heartbeats: raise the share or the TTL, or turn self-fencing off with a negative share",
			o.SelfFence, o.WorkerTTL, f.fenceAfter(), o.Heartbeat))
	}
	if o.DrainTimeout < 0 {
		errs = append(errs, errors.New("drain_timeout: must not be negative"))
	}
	if o.Control != nil {
		if err := o.Subjects.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("subjects: %w", err))
		}
		// An unset ID is generated later from the host name; a set one
		// becomes part of the control subject.
		if o.ID != "" {
			if err := checkControlID(o.ID); err != nil {
				errs = append(errs, fmt.Errorf("id: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// DefaultWorkerTTL is the controller's default worker TTL
// (controller.DefaultWorkerTTL, which cannot be imported from here).
const DefaultWorkerTTL = 4 * time.Second

// DefaultSelfFence is the default Options.SelfFence: with the default TTL
// a cut-off worker sends SIGTERM to its jobs 3 s after its last renewal
// and kills them at 3.5 s, half a second before the controller may run
// them elsewhere. A higher share rides out longer Redis stalls but leaves
// less margin for the kill and for the clocks of the two machines.
const DefaultSelfFence = 0.75

// MaxSelfFence is the highest share accepted: above it the margin for the
// kill and the clocks is a few percent of the TTL.
const MaxSelfFence = 0.9

// backoff is the delay before retry number n (0-based).
func (o Options) backoff(n int) time.Duration {
	d := o.RetryBackoff
	for i := 0; i < n && d < o.MaxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, o.MaxRetryBackoff)
}
