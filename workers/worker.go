package workers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/queues/gangs"
	"github.com/ballastdev/ballast/queues/logs"
	"github.com/ballastdev/ballast/workers/isolation"
)

// Worker serves one pool's queues with a fixed number of slots.
type Worker struct {
	// The store in its concerns (stores.go); New sets them all from one
	// queues.Store.
	deliveries  DeliverySource
	attempts    AttemptRecorder
	gangs       GangJoiner
	checkpoints CheckpointBook
	registry    WorkerRegistry
	logs        LogAppender

	opts Options
	log  *slog.Logger
	srv  *consumers
	// iso owns the worker's cgroups; nil before Start.
	iso *isolation.Manager
	// slots admits deliveries to the worker's slots, and hands its GPUs
	// out (see slotBook).
	slots *slotBook
	// labels are fixed at New.
	labels map[string]string
	// users are who jobs run as (Options.RunAs), fixed at New.
	users jobUsers

	id atomic.Value // string; replaced when the controller fences this worker
	// inc is this process start's incarnation token: a newer process under
	// the same ID takes the ID over, and this one is then fenced.
	inc string

	mu sync.Mutex
	// jobs holds the running attempts by task ID (job:attempt): after a
	// fence the same job can briefly have two attempts here.
	jobs   map[string]*running
	fenced map[string]bool // identities the controller fenced
	// ended remembers how recent attempts ended (see ended.go).
	ended *endedLog
	// unreadableIDs are jobs taken whose records cannot be read (see
	// noteUnreadable). Guarded by mu.
	unreadableIDs map[string]bool
	// assembling counts the gang members of each attempt being claimed
	// here (see assemble). Guarded by mu.
	assembling map[attemptKey]int
	draining   bool
	started    time.Time
	// identitySince is when the current registry identity began (see
	// queues.WorkerInfo.IdentitySince); guarded by mu.
	identitySince time.Time
	// fence is the self-fencing state (fence.go); guarded by mu.
	fence fencing

	hbCancel    context.CancelFunc
	hbDone      chan struct{}
	janitorDone chan struct{}
	fenceDone   chan struct{}
	// wake asks the heartbeat loop for a beat now (a control message came);
	// one slot, so a burst of messages costs one beat.
	wake chan struct{}

	noticeOnce  sync.Once
	spotRefused sync.Once     // logs a misaddressed spot notice once
	reclaimed   chan struct{} // closed once a spot notice was handled

	// The control subscription follows the identity; ctlMu orders its
	// changes (start, refence, stop).
	ctlMu     sync.Mutex
	ctlSub    *nats.Subscription
	ctlID     string
	ctlClosed bool

	// repairing is set while a repair of unrecorded attempts runs;
	// repairs counts it for the heartbeat loop's end.
	repairing atomic.Bool
	repairs   sync.WaitGroup

	// restoreGates are the restores of gang attempts here, by job ID
	// (ckstore.go). Guarded by mu.
	restoreGates map[string]*restoreGate
	// purges are deletions of ended jobs' checkpoints from the store.
	purges sync.WaitGroup

	// epoch watches the namespace's data in Redis (see dataloss.go).
	epoch *queues.EpochWatch

	startOnce sync.Once
	stopOnce  sync.Once
	startErr  error
}

// New returns a worker; call Start to run it.
//
// New takes the concrete store because it is where the store is split
// into the worker's concerns (stores.go): together they need more calls
// than one narrow interface should list.
func New(store *queues.Store, opts Options) (*Worker, error) {
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("workers.New: %w", err)
	}
	users, err := resolveJobUsers(opts, os.Geteuid())
	if err == nil {
		err = users.prepareCheckpointRoot(opts.CheckpointDir)
	}
	if err != nil {
		return nil, fmt.Errorf("workers.New: %w", err)
	}
	w := &Worker{users: users, deliveries: store, attempts: store, gangs: gangs.New(store), checkpoints: checkpoints.New(store),
		registry: store, logs: logs.New(store), opts: opts, log: opts.Logger.With("worker", opts.ID, "pool", opts.Pool),
		jobs: map[string]*running{}, fenced: map[string]bool{}, ended: newEndedLog(), wake: make(chan struct{}, 1), reclaimed: make(chan struct{}),
		slots: newSlotBook(opts.Slots, opts.GPUs)}
	w.id.Store(opts.ID)
	w.fence.timing = fenceTiming{ttl: opts.WorkerTTL, at: opts.SelfFence}
	w.inc = randomHex(16)
	w.epoch = queues.NewEpochWatch(store, "worker "+opts.ID, false)
	w.labels = workerLabels(opts.Labels, opts.GPUs)
	return w, nil
}

// ID returns the worker's current registry ID.
func (w *Worker) ID() string { return w.id.Load().(string) }

// Start registers the worker and starts consuming. Calling it twice is a no-op.
func (w *Worker) Start(ctx context.Context) error {
	w.startOnce.Do(func() { w.startErr = w.start(ctx) })
	return w.startErr
}

func (w *Worker) start(ctx context.Context) error {
	w.srv = w.newConsumers()
	w.started = w.opts.Now()
	w.identitySince = w.started
	// Before registering, so the first registry entry already says which
	// limits hold, and before taking work, so no job runs ungrouped.
	if err := w.openIsolation(); err != nil {
		return fmt.Errorf("workers.Start: %w", err)
	}
	// Before taking work, so no restore of this worker is in flight.
	w.cleanStaging()
	sent := w.opts.Now()
	b, err := w.registry.Register(ctx, w.info())
	if err != nil {
		return fmt.Errorf("workers.Start: register: %w", err)
	}
	w.fence.renewed = sent // nothing else runs yet
	w.tookOver(b.TakenOver)
	// Listen before taking work, so no job runs unreachable.
	if err := w.syncControl(); err != nil {
		return fmt.Errorf("workers.Start: %w", err)
	}
	if err := w.srv.start(asynq.HandlerFunc(w.process)); err != nil {
		return fmt.Errorf("workers.Start: %w", err)
	}
	hbCtx, cancel := context.WithCancel(context.Background())
	w.hbCancel, w.hbDone = cancel, make(chan struct{})
	go w.heartbeatLoop(hbCtx)
	w.janitorDone = make(chan struct{})
	go func() { defer close(w.janitorDone); w.janitorLoop(hbCtx) }()
	w.fenceDone = make(chan struct{})
	go func() { defer close(w.fenceDone); w.fenceLoop(hbCtx) }()
	w.publish(events.Event{ID: events.NewID(), Type: events.TypeWorkerUp, Worker: w.ID(), Time: w.opts.Now(),
		Data: events.WorkerInfo{Pool: w.opts.Pool, Slots: w.opts.Slots}.UpData()})
	w.log.Info("worker started", "slots", w.opts.Slots, "queues", w.opts.Queues)
	return nil
}

// Stop drains the worker: it stops taking work, lets running jobs finish for
// up to the drain timeout, then checkpoints and requeues the rest, and leaves
// the registry. Safe to call twice, or before Start.
func (w *Worker) Stop() {
	w.stopOnce.Do(func() {
		if w.srv == nil {
			return
		}
		w.srv.Stop()
		w.mu.Lock()
		w.draining = true
		w.mu.Unlock()
		// Deliveries waiting for slots go back to asynq, not into the drain.
		w.slots.close()
		w.log.Info("draining", "running", w.Running(), "timeout", w.opts.DrainTimeout)
		if !w.waitIdle(w.opts.DrainTimeout) {
			w.mu.Lock()
			for _, r := range w.jobs {
				r.stop(stopDrain)
			}
			w.mu.Unlock()
			w.waitIdle(0)
		}
		w.srv.Shutdown()
		w.waitPurges(30 * time.Second)
		if err := w.iso.Close(); err != nil {
			w.log.Warn("cgroups not removed; the next worker on this machine removes them", "err", err)
		}
		// No job runs any more: nothing is left to wake for.
		w.stopControl()
		if w.hbCancel != nil { // nil when Start failed before the loop began
			w.hbCancel()
			<-w.hbDone
			<-w.janitorDone
			<-w.fenceDone
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		left, err := w.registry.Leave(ctx, w.ID(), w.inc)
		if err != nil {
			w.log.Warn("deregister failed; the controller will notice the silence", "err", err)
		}
		// Claimed here unseen (a reply lost), so never run here.
		w.requeuedFor(left, "requeued a job on record as this worker's that it never ran", "worker stopped")
		if w.hbCancel != nil { // it announced itself up, so it says it left
			w.publish(events.Event{ID: events.NewID(), Type: events.TypeWorkerStopped, Worker: w.ID(), Time: w.opts.Now(),
				Data: events.WorkerInfo{Pool: w.opts.Pool}.StoppedData()})
		}
		w.log.Info("worker stopped")
	})
}

// tookOver reports the jobs the registry requeued because no live process of
// this ID runs them: those of its previous incarnation (a process that died,
// or is paused, under the same ID), or claimed by it after the takeover.
// They run again as new attempts, from their last checkpoint.
func (w *Worker) tookOver(rs []queues.Recovered) {
	w.requeuedFor(rs, "requeued a job of this worker ID's previous process", "worker restarted")
}

// requeuedFor logs and announces jobs the registry requeued for reason.
func (w *Worker) requeuedFor(rs []queues.Recovered, msg, reason string) {
	for _, r := range rs {
		w.log.Warn(msg, "job", r.JobID, "attempt", r.Attempt, "queue", r.Queue)
		w.publish(events.Event{ID: events.JobEventID(r.JobID, r.Attempt, events.TypeJobRequeued), Type: events.TypeJobRequeued,
			JobID: r.JobID, Attempt: r.Attempt, State: jobs.StateQueued, Queue: r.Queue, Worker: r.Worker,
			Reason: reason, Time: w.opts.Now()})
	}
}

// isDraining reports whether the worker stopped taking work.
func (w *Worker) isDraining() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.draining
}

// waitIdle waits until no job runs, for at most d (0 = no limit).
func (w *Worker) waitIdle(d time.Duration) bool {
	deadline := w.opts.Now().Add(d)
	poll := time.NewTicker(idlePoll)
	defer poll.Stop()
	for w.Running() > 0 {
		if d > 0 && w.opts.Now().After(deadline) {
			return false
		}
		<-poll.C
	}
	return true
}

// idlePoll is how often waitIdle looks whether the last job ended.
const idlePoll = 20 * time.Millisecond

// runningSlots is how many slots the running attempts hold: one each,
// but one for all the attempts sharing a GPU, and never more than the
// worker has (an attempt that gave its share back is still listed until
// it is settled). Called with w.mu held.
func (w *Worker) runningSlots() int {
	sharers, devices := w.slots.sharing()
	return min(max(len(w.jobs)-sharers, 0)+devices, w.opts.Slots)
}

// Running returns how many jobs run now.
func (w *Worker) Running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.jobs)
}

func (w *Worker) info() queues.WorkerInfo {
	host, _ := os.Hostname()
	w.mu.Lock()
	defer w.mu.Unlock()
	// Placement targets the queue of the ID the worker started under; a
	// worker fenced into a new ID offers none (see queues.PlaceQueue).
	var place string
	if w.ID() == w.opts.ID {
		place = string(queues.PlaceQueue(w.opts.ID))
	}
	fences, fenced := w.fenceReport(w.opts.Now())
	return queues.WorkerInfo{ID: w.ID(), Pool: w.opts.Pool, Slots: w.opts.Slots, Busy: max(w.slots.busy(), w.runningSlots()), PlaceQueue: place,
		Queues: w.opts.Queues, Host: host, PID: os.Getpid(), Draining: w.draining, StartedAt: w.started, IdentitySince: w.identitySince,
		Incarnation: w.inc, Spot: w.opts.Spot, Isolation: w.isolationReport(), Labels: w.labels, GPUs: w.gpuReport(),
		CPUs: w.opts.CPUs, Memory: w.opts.Memory, SelfFences: fences, SelfFencedSeconds: fenced}
}

func (w *Worker) isolationReport() *queues.Isolation {
	if w.iso == nil {
		return nil
	}
	r := w.iso.Report()
	return &r
}

// announces reports whether events go anywhere. A job's start and end
// events are built only when they do: a worker without an event bus
// (events.Discard) would build two per job for nobody.
func (w *Worker) announces() bool { return w.opts.Events != events.Discard }

func (w *Worker) publish(e events.Event) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := w.opts.Events.Publish(ctx, e); err != nil {
		w.log.Warn("event not published", "type", e.Type, "job", e.JobID, "err", err)
	}
}

// errStale marks deliveries whose attempt has moved on.
var errStale = errors.New("stale delivery")

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
