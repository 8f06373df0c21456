package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/leader"
)

// Options configures the Controller loop.
type Options struct {
	// ID names this controller in the leader lease ("" = host-pid).
	ID string
	// Tick is the loop period.
	Tick time.Duration
	// WorkerTTL: a worker silent for longer is declared dead.
	WorkerTTL time.Duration
	// RecoverEvery is how often the leader looks for silent workers, apart
	// from its tick: a dead worker's jobs then wait at most WorkerTTL plus
	// this, not plus a whole tick (default DefaultRecoverEvery).
	RecoverEvery time.Duration
	// Exited, when set, delivers the IDs of workers whose process the
	// provider saw exit (provider.ExitNotifier). The leader recovers each at
	// once: its jobs need not wait out WorkerTTL.
	Exited <-chan string
	// LeaderTTL is the leader lease; a dead leader is replaced after it.
	LeaderTTL time.Duration
	// Lease is the leader lease (leader.Store); nil means the lease of the
	// store's namespace, when the store is a kernel (the Redis store is).
	Lease LeaderLease
	// HeldGrace: an attempt whose task a worker took but never claimed is
	// moved on after this (default DefaultHeldGrace).
	HeldGrace time.Duration
	// OutboxGrace: an attempt queued in a record but without a confirmed
	// task for longer is enqueued by the controller.
	OutboxGrace time.Duration
	Events      events.Publisher
	Logger      *slog.Logger
	// OnRecover, when set, is told of each job requeued from a dead worker
	// (tests and the dev console use it).
	OnRecover func(queues.Recovered)
	// Capacity, when set, runs the hybrid capacity policy each leader tick:
	// lending, reclaim, migration, elastic scale-up, drain and release.
	Capacity *Hybrid
	// Pipelines, when set, fires configured pipelines and advances their
	// runs each leader tick.
	Pipelines *Pipelines
	// Sweeps, when set, fans out sweep trials, applies early stopping and
	// finishes or cancels sweeps each leader tick.
	Sweeps *Sweeps
	// Now is the clock handed to the policies (tests inject one); nil
	// means time.Now.
	Now func() time.Time
	// PriorEvents, when set, says how many events of this namespace the
	// event stream holds and when the last was stored. A controller that
	// starts on a Redis without the namespace marker asks it: a stream
	// with history means Redis lost its data before this process started
	// (a restart without persistence, a flush), which the marker alone
	// cannot tell from a first start.
	PriorEvents func(ctx context.Context) (n uint64, last time.Time, err error)
	// FirstJobEvent, when set, names the job of the stream's oldest event
	// about a job (ok false: no event names one). With PriorEvents it
	// tells a first start that a submission reached before the first
	// tick (Redis holds that job) from data lost before the start (it
	// does not).
	FirstJobEvent func(ctx context.Context) (job string, ok bool, err error)
	// OnDataLoss, when set, is told the loss record at every tick that
	// finds one, and nil once it is gone (acknowledged or recovered): the
	// metrics export it as a gauge.
	OnDataLoss func(*queues.DataLoss)
	// RecoverLost, when set, makes the leader rebuild the lost jobs on its
	// own when a loss record is found (config redis.recover_on_loss): it
	// is called each leader tick while the record stays, and removes it
	// when it completes (see Recover).
	RecoverLost func(ctx context.Context) error
	// RecoverSettle is how old a loss record must be before RecoverLost
	// runs (see RecoverOptions.Settle): the workers that ran the lost
	// jobs stop them, or publish the ends no record can take, first.
	RecoverSettle time.Duration
}

// WithDefaults fills unset options.
func (o Options) WithDefaults() Options {
	if o.ID == "" {
		host, _ := os.Hostname()
		o.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if o.Tick == 0 {
		o.Tick = time.Second
	}
	if o.WorkerTTL == 0 {
		o.WorkerTTL = DefaultWorkerTTL
	}
	if o.RecoverEvery == 0 {
		o.RecoverEvery = DefaultRecoverEvery
	}
	if o.LeaderTTL == 0 {
		o.LeaderTTL = 5 * time.Second
	}
	if o.HeldGrace == 0 {
		o.HeldGrace = DefaultHeldGrace
	}
	if o.OutboxGrace == 0 {
		o.OutboxGrace = 5 * time.Second
	}
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

// Validate names bad options.
func (o Options) Validate() error {
	var errs []error
	if o.Tick <= 0 {
		errs = append(errs, errors.New("tick: must be positive"))
	}
	if o.WorkerTTL < 2*o.Tick {
		errs = append(errs, fmt.Errorf("worker_ttl: %s should be at least two ticks (%s) so one slow tick does not declare workers dead", o.WorkerTTL, 2*o.Tick))
	}
	if o.RecoverEvery < 0 {
		errs = append(errs, errors.New("recover_every: must not be negative"))
	}
	if o.LeaderTTL < 2*o.Tick {
		errs = append(errs, fmt.Errorf("leader_ttl: %s should be at least two ticks (%s)", o.LeaderTTL, 2*o.Tick))
	}
	return errors.Join(errs...)
}

// DefaultWorkerTTL is how long a worker may be silent before it is declared
// dead: eight of the default heartbeats (500 ms), so a slow beat or two is
// not a death, while a killed worker's jobs are requeued in about 4 s.
const DefaultWorkerTTL = 4 * time.Second

// DefaultRecoverEvery is the default cadence of dead-worker detection. It
// is one ZRANGEBYSCORE on the registry when nobody is dead.
const DefaultRecoverEvery = 200 * time.Millisecond

// trimEvery is how often the leader drops expired jobs from the index.
const trimEvery = time.Minute

// Controller runs the control loop. Several may run; only the leader acts.
type Controller struct {
	store ControllerStore
	lease LeaderLease
	opts  Options
	log   *slog.Logger

	mu           sync.Mutex
	leader       bool
	healthy      time.Time            // when Redis last came back; zero while down
	trimmed      time.Time            // when the job index was last trimmed
	epoch        *queues.EpochWatch   // what this process saw of the namespace's data
	loss         *queues.DataLoss     // the unacknowledged loss record at the last look
	announced    time.Time            // the loss record whose event this process published
	recoveredFor time.Time            // the loss record this leader ran RecoverLost for
	held         map[string]time.Time // task ID → when first seen taken but unclaimed
	cancel       context.CancelFunc
	done         chan struct{}
	recDone      chan struct{} // closed when recoverLoop ends
	poke         chan struct{}
	flowPoke     chan struct{}
	startOnce    sync.Once
	stopOnce     sync.Once
}

// New returns a controller.
func New(store ControllerStore, opts Options) (*Controller, error) {
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("controller.New: %w", err)
	}
	lease := opts.Lease
	if lease == nil {
		k, ok := store.(queues.Kernel)
		if !ok {
			return nil, errors.New("controller.New: no leader lease (set Options.Lease)")
		}
		lease = leader.New(k)
	}
	return &Controller{store: store, lease: lease, opts: opts, log: opts.Logger.With("controller", opts.ID), poke: make(chan struct{}, 1),
		flowPoke: make(chan struct{}, 1), epoch: queues.NewEpochWatch(store, "controller "+opts.ID, true)}, nil
}

// Start runs the loop in the background. Calling it twice is a no-op.
func (c *Controller) Start(ctx context.Context) error {
	c.startOnce.Do(func() {
		ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
		c.done = make(chan struct{})
		c.recDone = make(chan struct{})
		go c.loop(ctx)
		go c.recoverLoop(ctx)
	})
	return nil
}

// Stop ends the loop and gives up leadership so a standby takes over at once.
// Safe to call twice or before Start.
func (c *Controller) Stop() {
	c.stopOnce.Do(func() {
		if c.cancel == nil {
			return
		}
		c.cancel()
		<-c.done
		<-c.recDone
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = c.lease.Resign(ctx, c.opts.ID)
	})
}

// Leader reports whether this controller led at its last tick.
func (c *Controller) Leader() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leader
}

func (c *Controller) loop(ctx context.Context) {
	defer close(c.done)
	t := time.NewTicker(c.opts.Tick)
	defer t.Stop()
	for {
		c.Tick(ctx)
		if !c.waitForTick(ctx, t.C) {
			return
		}
	}
}

// waitForTick runs flow ticks on flow pokes and at pipelines' scheduled
// times until the period ends or a whole tick is poked; false means the
// loop is stopping.
func (c *Controller) waitForTick(ctx context.Context, period <-chan time.Time) bool {
	for {
		// Wake at the next scheduled time, so a run starts within
		// milliseconds of it rather than up to a tick later.
		var fire <-chan time.Time
		var timer *time.Timer
		if c.opts.Pipelines != nil && c.Leader() {
			if next := c.opts.Pipelines.NextFire(c.opts.Now()); !next.IsZero() {
				timer = time.NewTimer(max(next.Sub(c.opts.Now()), 0))
				fire = timer.C
			}
		}
		stop := func() {
			if timer != nil {
				timer.Stop()
			}
		}
		select {
		case <-ctx.Done():
			stop()
			return false
		case <-period:
			stop()
			return true
		case <-c.poke:
			stop()
			return true
		case <-fire:
			c.flowTick(ctx)
		case <-c.flowPoke:
			stop()
			c.flowTick(ctx)
			// A storm of job events must not turn into a busy loop.
			select {
			case <-ctx.Done():
				return false
			case <-time.After(flowPokeGap):
			}
		}
	}
}

// flowPokeGap is the least time between two flow ticks run on pokes.
const flowPokeGap = 50 * time.Millisecond

// PokeFlows asks the leader to advance pipelines and sweeps now, without a
// whole tick: a finished step or trial should start the next one at once,
// not at the next period. Pokes that arrive while one is pending merge.
func (c *Controller) PokeFlows() {
	select {
	case c.flowPoke <- struct{}{}:
	default:
	}
}

// flowTick advances pipelines and sweeps if this controller leads.
func (c *Controller) flowTick(ctx context.Context) {
	if !c.Leader() || (c.opts.Pipelines == nil && c.opts.Sweeps == nil) {
		return
	}
	tctx, cancel := context.WithTimeout(ctx, c.opts.Tick*4)
	defer cancel()
	c.advanceFlows(tctx, c.opts.Now())
}

func (c *Controller) advanceFlows(ctx context.Context, now time.Time) {
	if c.opts.Pipelines != nil {
		if err := c.opts.Pipelines.Tick(ctx, now); err != nil {
			c.log.Warn("pipelines not fully advanced; retrying next tick", "err", err)
		}
	}
	if c.opts.Sweeps != nil {
		if err := c.opts.Sweeps.Tick(ctx, now); err != nil {
			c.log.Warn("sweeps not fully advanced; retrying next tick", "err", err)
		}
	}
}

// Poke asks for a tick now instead of at the next period: a core job that
// may need a reclaimed slot should not wait up to a whole tick. Pokes that
// arrive while one is pending merge into it.
func (c *Controller) Poke() {
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

// Tick runs one round: take or renew the lease; if leading, recover dead
// workers and reconcile the outbox.
func (c *Controller) Tick(ctx context.Context) {
	tctx, cancel := context.WithTimeout(ctx, c.opts.Tick*4)
	defer cancel()
	lead, err := c.lease.Acquire(tctx, c.opts.ID, c.opts.LeaderTTL)
	now := c.opts.Now()
	c.mu.Lock()
	if err != nil {
		c.healthy = time.Time{}
	} else if c.healthy.IsZero() {
		c.healthy = now
	}
	healthySince := c.healthy
	was := c.leader
	c.leader = lead && err == nil
	c.mu.Unlock()
	if err != nil {
		c.log.Warn("cannot reach Redis", "err", err)
		return
	}
	if lead != was {
		c.log.Info("leadership changed", "leader", lead)
		if c.opts.Capacity != nil {
			// Another leader may have acted meanwhile: the next
			// capacity tick reads everything again.
			c.opts.Capacity.Forget()
		}
	}
	// Every controller looks, not only the leader: the lease is in Redis
	// too, so after a loss any of them may lead next, and it must know
	// what was there before.
	loss := c.checkEpoch(tctx, now, lead)
	if !lead {
		c.held = nil // a leader to come starts its own watch
		return
	}
	c.recoverLost(tctx, now, loss)
	// After an outage every worker's heartbeat looks old; give them one TTL
	// to beat again before declaring anyone dead.
	if now.Sub(healthySince) >= c.opts.WorkerTTL {
		c.recover(tctx)
		// Also only once Redis has answered for a while: a claim stuck in
		// an outage would look held.
		c.moveHeld(tctx, now)
	} else {
		c.held = nil // what was seen before the outage says nothing now
	}
	if _, err := c.store.ReconcileOutbox(tctx, c.opts.OutboxGrace, 500); err != nil {
		c.log.Warn("outbox reconcile failed", "err", err)
	}
	// Records expire after their retention; their index entries must go too.
	if now.Sub(c.trimmed) >= trimEvery {
		if err := c.store.TrimIndex(tctx); err != nil {
			c.log.Warn("trimming the job index failed", "err", err)
		} else {
			c.trimmed = now
		}
	}
	c.advanceFlows(tctx, now)
	if c.opts.Capacity != nil {
		if _, err := c.opts.Capacity.Tick(tctx, now); err != nil {
			c.log.Warn("capacity plan not fully applied", "err", err)
		}
	}
}

func (c *Controller) recover(ctx context.Context) {
	recovered, err := c.store.RecoverDeadWorkers(ctx, c.opts.WorkerTTL)
	if err != nil {
		c.log.Warn("dead worker recovery failed", "err", err)
	}
	c.recovered(recovered, "worker lost")
}

// recovered publishes and reports the jobs requeued from dead workers.
func (c *Controller) recovered(recovered []queues.Recovered, reason string) {
	lost := map[string]bool{}
	for _, r := range recovered {
		c.log.Info("requeued a job of a dead worker", "job", r.JobID, "worker", r.Worker, "attempt", r.Attempt, "silence", r.Silence, "reason", reason)
		c.publish(events.Event{ID: events.JobEventID(r.JobID, r.Attempt, events.TypeJobRequeued), Type: events.TypeJobRequeued,
			JobID: r.JobID, Attempt: r.Attempt, Runs: c.runsOf(r.JobID), State: jobs.StateQueued, Queue: r.Queue, Worker: r.Worker,
			Reason: reason, Time: time.Now()})
		if !lost[r.Worker] {
			lost[r.Worker] = true
			c.publish(events.Event{ID: events.NewID(), Type: events.TypeWorkerLost, Worker: r.Worker, Time: time.Now(),
				Data: events.WorkerLostData(r.Silence)})
		}
		if c.opts.OnRecover != nil {
			c.opts.OnRecover(r)
		}
		c.changed(r.JobID)
	}
}

// recoverLoop looks for dead workers between ticks, and recovers at once a
// worker whose process the provider saw exit. Only the leader acts, and only
// once Redis has been reachable for a worker TTL (see Tick).
func (c *Controller) recoverLoop(ctx context.Context) {
	defer close(c.recDone)
	t := time.NewTicker(c.opts.RecoverEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if c.mayRecover() {
				rctx, cancel := context.WithTimeout(ctx, c.opts.Tick*4)
				c.recover(rctx)
				cancel()
			}
		case id := <-c.opts.Exited:
			if !c.Leader() {
				continue // the leader's own provider reports its children
			}
			rctx, cancel := context.WithTimeout(ctx, c.opts.Tick*4)
			rs, err := c.store.RecoverWorker(rctx, id)
			cancel()
			if err != nil {
				// The TTL path recovers it a few seconds later.
				c.log.Warn("recovering an exited worker failed", "worker", id, "err", err)
			}
			c.recovered(rs, "worker process exited")
		}
	}
}

// mayRecover reports whether this controller leads and Redis has been
// healthy for a worker TTL, so that old heartbeats mean silence.
func (c *Controller) mayRecover() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leader && !c.healthy.IsZero() && c.opts.Now().Sub(c.healthy) >= c.opts.WorkerTTL
}

func (c *Controller) publish(e events.Event) { publish(c.opts.Events, c.log, e) }

// runsOf is the record's count of runs that started, for the events the
// controller publishes of a job it requeued (rare: a dead worker's jobs, a
// held delivery moved on). 0 when the record cannot be read: the event is
// still worth sending, and its readers take 0 as unknown.
func (c *Controller) runsOf(jobID string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	j, err := c.store.Get(ctx, jobID)
	if err != nil {
		return 0
	}
	return j.Runs
}

// changed tells the capacity policy's kept view that the leader moved a job.
func (c *Controller) changed(jobID string) {
	if c.opts.Capacity != nil {
		c.opts.Capacity.Changed(jobID)
	}
}
