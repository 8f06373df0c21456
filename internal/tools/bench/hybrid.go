package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/queues/usage"
	"github.com/ballastdev/ballast/workers"
)

// The hybrid bench's installation: one fixed slot, so that a single lent
// job or core job fills it, and an on-demand pool of one-slot workers billed
// per second with no minimum, so that the idle TTL alone decides a release.
const (
	hyFixedPool    = "fixed"
	hyElasticPool  = "ondemand"
	hyElasticMax   = 2
	hyIdleTTL      = time.Second
	hyHoldHandler  = "bench.hold"
	hyCoreHandler  = "bench.core"
	hyBurstCommand = "sleep"
	hyDrainTimeout = 2 * time.Second
	hyReleaseLimit = 10 * time.Second
	hyRegistryPoll = 5 * time.Millisecond
	hyRunParam     = "run"
)

// hybrid is one RunHybrid's shared state.
type hybrid struct {
	opts    HybridOptions
	rdb     redis.UniversalClient
	ns      string
	dir     string
	out     io.Writer
	log     *slog.Logger
	cfgPath string
	// burstFor is how long each backlog job runs: long enough for the
	// controller to see its worker busy (see elasticJobTime).
	burstFor time.Duration

	srv      *server.Server
	nc       *nats.Conn
	subj     events.Subjects
	pub      events.Publisher
	store    *queues.Store
	childLog *os.File
	local    *provider.Local
	prov     *recordingProvider
	fixed    *workers.Worker
	ctl      *controller.Controller
	capacity *controller.Hybrid

	mu   sync.Mutex
	runs map[string]*hybridRun
}

// hybridRun is what one repetition's handlers report to.
type hybridRun struct {
	lentOnce    sync.Once
	lentStarted chan struct{}
	coreStarted chan time.Time
	release     chan struct{}
	releaseOnce sync.Once

	mu        sync.Mutex
	cancelled time.Time // the lent job saw its context cancelled
	returned  time.Time // and returned
}

func newHybridRun() *hybridRun {
	return &hybridRun{lentStarted: make(chan struct{}), coreStarted: make(chan time.Time, 1), release: make(chan struct{})}
}

// finish lets the run's core job end; calling it twice is fine.
func (r *hybridRun) finish() { r.releaseOnce.Do(func() { close(r.release) }) }

func (r *hybridRun) stopped() (cancelled, returned time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancelled, r.returned
}

// hybridSamples collects the raw figures across runs.
type hybridSamples struct {
	reclaim, decision, handover, victimStop []time.Duration
	scaleUp, registered                     []time.Duration
	release, beyond                         []time.Duration
}

// RunHybrid measures the hybrid controller's reactions in a fresh namespace
// on o.RedisAddr with an embedded NATS server: reclaim latency, scale-up
// reaction and release reaction, each o.Runs times. A real controller (with
// the capacity policy), an in-process fixed worker and the Local provider's
// `ballast worker` children do the work; the bench only submits and
// watches. The namespace's keys are deleted before it returns.
func RunHybrid(ctx context.Context, o HybridOptions) (HybridResult, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return HybridResult{}, fmt.Errorf("bench: %w", err)
	}
	rdb, err := config.NewRedisClient(config.RedisConfig{Addr: o.RedisAddr}, 32)
	if err != nil {
		return HybridResult{}, fmt.Errorf("bench: %w", err)
	}
	defer rdb.Close()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	err = rdb.Ping(pctx).Err()
	cancel()
	if err != nil {
		return HybridResult{}, fmt.Errorf("bench: redis at %s: %w: %v", o.RedisAddr, jobs.ErrUnavailable, err)
	}
	dir, err := os.MkdirTemp("", "ballast-bench-hybrid-")
	if err != nil {
		return HybridResult{}, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(dir)

	out := &lockedWriter{w: o.Out}
	h := &hybrid{opts: o, rdb: rdb, ns: "benchhy" + randomHex(5), dir: dir, out: out, runs: map[string]*hybridRun{},
		log: slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	// Registered first, so it runs last: after teardown nothing writes into
	// the namespace any more.
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = queues.PurgeNamespace(ctx, rdb, h.ns)
	}()
	defer h.teardown()

	res := HybridResult{RedisAddr: o.RedisAddr, Namespace: h.ns, Runs: o.Runs, Tick: o.Tick, Grace: o.Grace, IdleTTL: hyIdleTTL}
	if err := h.setup(ctx); err != nil {
		return res, err
	}
	res.ElasticJob = h.burstFor
	var s hybridSamples
	var runErr error
	for i := range o.Runs {
		if runErr = h.run(ctx, i, &s); runErr != nil {
			runErr = fmt.Errorf("bench: run %d of %d: %w", i+1, o.Runs, runErr)
			break
		}
	}
	res.Reclaim, res.ReclaimDecision, res.ReclaimHandover = summarize(s.reclaim), summarize(s.decision), summarize(s.handover)
	res.VictimStop = summarize(s.victimStop)
	res.ScaleUp, res.Registered = summarize(s.scaleUp), summarize(s.registered)
	res.Release, res.ReleaseBeyondTTL = summarize(s.release), summarize(s.beyond)
	return res, runErr
}

// setup starts NATS, writes the config the elastic children load, and
// starts the fixed worker, the provider and the controller.
func (h *hybrid) setup(ctx context.Context) error {
	o := h.opts
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: filepath.Join(h.dir, "nats"), NoLog: true, NoSigs: true})
	if err != nil {
		return fmt.Errorf("bench: embedded nats: %w", err)
	}
	go srv.Start()
	h.srv = srv
	if !srv.ReadyForConnections(10 * time.Second) {
		return errors.New("bench: embedded nats not ready within 10s")
	}
	if h.nc, err = nats.Connect(srv.ClientURL(), nats.Name("ballast-bench-hybrid")); err != nil {
		return fmt.Errorf("bench: connect to embedded nats: %w", err)
	}
	h.subj = events.Subjects{Prefix: h.ns}
	js, err := jetstream.New(h.nc)
	if err != nil {
		return fmt.Errorf("bench: jetstream: %w", err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = eventbus.EnsureStream(sctx, js, "E"+h.ns, h.subj, time.Hour)
	cancel()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	h.pub = eventbus.NewNATSPublisher(h.nc, h.subj)
	h.store = queues.NewStore(h.rdb, queues.StoreOptions{Namespace: h.ns})

	cfg, err := h.writeConfig(srv.ClientURL())
	if err != nil {
		return err
	}
	h.burstFor = elasticJobTime(cfg.Worker.Heartbeat.Std(), o.Tick)

	h.fixed, err = workers.New(h.store, workers.Options{ID: "bench-fixed-" + randomHex(3), Pool: hyFixedPool, Slots: 1,
		Queues:       []queues.Queue{queues.QueueCore, queues.QueueLoan},
		PollInterval: cfg.Worker.PollInterval.Std(), Heartbeat: cfg.Worker.Heartbeat.Std(), DrainTimeout: hyDrainTimeout,
		LogDir: cfg.Worker.LogDir, CheckpointDir: cfg.Worker.CheckpointDir,
		Handlers: map[string]workers.Handler{hyHoldHandler: h.holdHandler, hyCoreHandler: h.coreHandler},
		Events:   h.pub, Logger: h.log, Control: h.nc, Subjects: h.subj})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := h.fixed.Start(ctx); err != nil {
		h.fixed = nil
		return fmt.Errorf("bench: %w", err)
	}

	if h.childLog, err = os.Create(filepath.Join(h.dir, "elastic.log")); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	h.local, err = provider.NewLocal(provider.LocalOptions{Binary: o.Binary, ConfigPath: h.cfgPath,
		ReleaseTimeout: hyReleaseLimit, Output: &lockedWriter{w: h.childLog}, Logger: h.log})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	h.prov = newRecordingProvider(h.local)

	pc := policy.DefaultConfig()
	pc.High, pc.Low = cfg.Watermarks.High, cfg.Watermarks.Low
	capacity := &controller.Hybrid{Store: h.store, Launches: usage.New(h.store), Registry: registry.New(h.store), Provider: h.prov, Pools: cfg.PolicyPools(), Config: pc, Events: h.pub,
		Logger: h.log, Control: workers.NATSControl{Conn: h.nc, Subjects: h.subj}}
	ttl := max(5*time.Second, 3*o.Tick)
	ctl, err := controller.New(h.store, controller.Options{ID: "bench-ctl-" + randomHex(3), Tick: o.Tick, WorkerTTL: ttl,
		LeaderTTL: ttl, Events: h.pub, Logger: h.log, Capacity: capacity})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := ctl.Start(ctx); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	h.ctl, h.capacity = ctl, capacity
	return nil
}

// writeConfig writes the configuration the elastic children load: the
// development defaults (production worker poll interval and heartbeat)
// with this bench's namespace, NATS server and pools.
func (h *hybrid) writeConfig(natsURL string) (config.Config, error) {
	cfg := config.Dev()
	cfg.Namespace = h.ns
	cfg.Redis.Addr = h.opts.RedisAddr
	cfg.NATS.URL = natsURL
	cfg.NATS.SubjectPrefix = h.ns
	cfg.NATS.Stream = "E" + h.ns
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.Controller.Tick = jobs.Duration(h.opts.Tick)
	cfg.Worker.DrainTimeout = jobs.Duration(hyDrainTimeout)
	cfg.Worker.LogDir = filepath.Join(h.dir, "logs")
	cfg.Worker.CheckpointDir = filepath.Join(h.dir, "checkpoints")
	// High 1: a single fixed slot can be lent (a lower watermark rounds the
	// one slot down to none).
	cfg.Watermarks = config.Watermarks{High: 1, Low: 0.4}
	cfg.Pools = map[string]config.PoolConfig{
		hyFixedPool: {Kind: config.PoolFixed, Slots: 1, PricePerSlotHour: 1},
		hyElasticPool: {Kind: config.PoolOnDemand, PricePerSlotHour: 2.5, Billing: config.BillingPerSecond,
			MinBilling: 0, IdleTTL: jobs.Duration(hyIdleTTL), MaxWorkers: hyElasticMax, SlotsPerWorker: 1},
	}
	cfg.Templates = nil
	cfg.Pipelines = nil // the dev pipelines name dev templates, and would take the bench's slots
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return cfg, fmt.Errorf("bench: encode config: %w", err)
	}
	h.cfgPath = filepath.Join(h.dir, "ballast.yaml")
	if err := os.WriteFile(h.cfgPath, data, 0o600); err != nil {
		return cfg, fmt.Errorf("bench: %w", err)
	}
	// Loading it back is what the children do; failing here says why.
	loaded, err := config.Load(h.cfgPath)
	if err != nil {
		return cfg, fmt.Errorf("bench: the bench's config does not load: %w", err)
	}
	return loaded, nil
}

// elasticJobTime is how long a backlog job runs. The controller learns that
// a worker is busy from the registry, which the worker updates at its
// heartbeat, and it starts a worker's idle clock at the first tick that
// shows it idle. A job shorter than a heartbeat plus a tick can pass unseen,
// and its worker's idle clock then runs from before the job finished; two
// ticks and a margin make sure the controller sees every job, so that the
// release figure measures an idle period that starts when the job ends.
func elasticJobTime(heartbeat, tick time.Duration) time.Duration {
	return heartbeat + 2*tick + 250*time.Millisecond
}

// teardown stops everything setup started, in reverse order; it is safe
// after a partial setup.
func (h *hybrid) teardown() {
	if h.ctl != nil {
		h.ctl.Stop()
	}
	h.mu.Lock()
	for _, r := range h.runs {
		r.finish()
	}
	h.mu.Unlock()
	if h.local != nil {
		if err := h.local.Close(); err != nil {
			h.log.Warn("elastic workers did not stop", "err", err)
		}
	}
	if h.childLog != nil {
		_ = h.childLog.Close()
	}
	if h.fixed != nil {
		h.fixed.Stop()
	}
	if h.nc != nil {
		h.nc.Close()
	}
	if h.srv != nil {
		h.srv.Shutdown()
		h.srv.WaitForShutdown()
	}
}

// lookup finds the run a handler's job belongs to.
func (h *hybrid) lookup(r *workers.Run) (*hybridRun, error) {
	key, _ := r.Params[hyRunParam].(string)
	h.mu.Lock()
	defer h.mu.Unlock()
	run, ok := h.runs[key]
	if !ok {
		return nil, fmt.Errorf("bench: job %s names no run (%q)", r.JobID, key)
	}
	return run, nil
}

// holdHandler is the lent burst job: it runs until its context is
// cancelled and then returns at once, so a reclaim never waits for its
// grace period.
func (h *hybrid) holdHandler(ctx context.Context, r *workers.Run) error {
	run, err := h.lookup(r)
	if err != nil {
		return err
	}
	run.lentOnce.Do(func() { close(run.lentStarted) })
	<-ctx.Done()
	cancelled := time.Now()
	run.mu.Lock()
	if run.cancelled.IsZero() {
		run.cancelled, run.returned = cancelled, time.Now()
	}
	run.mu.Unlock()
	return ctx.Err()
}

// coreHandler is the core job: it reports its start and holds the fixed
// slot until the run lets it go.
func (h *hybrid) coreHandler(ctx context.Context, r *workers.Run) error {
	now := time.Now()
	run, err := h.lookup(r)
	if err != nil {
		return err
	}
	select {
	case run.coreStarted <- now:
	default:
	}
	select {
	case <-run.release:
	case <-ctx.Done():
	}
	return nil
}

// patience bounds every wait of a run: it turns a hang into an error, it
// does not judge speed.
func (h *hybrid) patience() time.Duration { return 20*time.Second + 10*h.opts.Tick }

// run is one repetition of the three measures.
func (h *hybrid) run(ctx context.Context, i int, s *hybridSamples) error {
	key := strconv.Itoa(i)
	run := newHybridRun()
	h.mu.Lock()
	h.runs[key] = run
	h.mu.Unlock()
	defer run.finish()
	params := map[string]any{hyRunParam: key}
	if err := h.settle(ctx); err != nil {
		return err
	}

	// Reclaim: a burst job is lent to the idle fixed slot; a core job then
	// needs that slot.
	lent, err := h.submit(ctx, jobs.Spec{Template: "bench.hybrid.lent", Handler: hyHoldHandler, Params: params,
		Class: jobs.ClassBurst, Rhythm: jobs.RhythmPulse, Retryable: true,
		Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(h.opts.Grace)})
	if err != nil {
		return err
	}
	if err := h.await(ctx, run.lentStarted, "the burst job lent to the fixed slot"); err != nil {
		return fmt.Errorf("%w (%s)", err, h.describe(lent))
	}
	// A random pause puts the submit anywhere in the controller's tick, as
	// an independent arrival would be.
	if err := sleep(ctx, randDuration(h.opts.Tick)); err != nil {
		return err
	}
	t0 := time.Now()
	core, err := h.submit(ctx, jobs.Spec{Template: "bench.hybrid.core", Handler: hyCoreHandler, Params: params,
		Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic, Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second)})
	if err != nil {
		return err
	}
	var coreAt time.Time
	select {
	case coreAt = <-run.coreStarted:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(h.patience()):
		return fmt.Errorf("the core job did not start within %s", h.patience())
	}
	reclaim := coreAt.Sub(t0)
	s.reclaim = append(s.reclaim, reclaim)
	cancelled, returned := run.stopped()
	if !cancelled.IsZero() {
		s.decision = append(s.decision, cancelled.Sub(t0))
		s.handover = append(s.handover, coreAt.Sub(cancelled))
		s.victimStop = append(s.victimStop, returned.Sub(cancelled))
	}
	// The preempted job waits in burst; it is only a prop, and left there
	// it would be placed on elastic capacity, which has no handler for it.
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = h.store.Cancel(cctx, lent)
	cancel()
	if err != nil {
		return fmt.Errorf("cancel the preempted job: %w", err)
	}

	// Scale-up: with the fixed slot held by the core job, a burst backlog
	// can only run on elastic capacity. A tick that saw the preempted job
	// queued may have launched for it: wait until that is over.
	if err := sleep(ctx, h.opts.Tick+50*time.Millisecond); err != nil {
		return err
	}
	if err := h.waitUntil(ctx, "no elastic worker left from earlier", h.noElastic); err != nil {
		return err
	}
	if err := sleep(ctx, randDuration(h.opts.Tick)); err != nil {
		return err
	}
	t1 := time.Now()
	backlog := make([]string, 0, hyElasticMax)
	for range hyElasticMax {
		id, err := h.submit(ctx, jobs.Spec{Template: "bench.hybrid.burst", Command: []string{hyBurstCommand, strconv.FormatFloat(h.burstFor.Seconds(), 'f', 3, 64)},
			Class: jobs.ClassBurst, Rhythm: jobs.RhythmPulse, Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)})
		if err != nil {
			return err
		}
		backlog = append(backlog, id)
	}
	var launchAt, registeredAt time.Time
	err = h.waitUntil(ctx, "an elastic launch and its worker registered", func() (bool, error) {
		if launchAt.IsZero() {
			launchAt = h.prov.firstLaunchSince(t1)
		}
		if registeredAt.IsZero() {
			ws, err := registry.New(h.store).Workers(ctx)
			if err != nil {
				return false, err
			}
			for _, w := range ws {
				if w.Pool == hyElasticPool {
					registeredAt = time.Now()
				}
			}
		}
		return !launchAt.IsZero() && !registeredAt.IsZero(), nil
	})
	if err != nil {
		return err
	}
	s.scaleUp = append(s.scaleUp, launchAt.Sub(t1))
	s.registered = append(s.registered, registeredAt.Sub(t1))

	// Release: each elastic worker is handed back once idle for the TTL.
	finished := map[string]time.Time{} // worker → when its last job finished
	err = h.waitUntil(ctx, "the backlog succeeded", func() (bool, error) {
		for _, id := range backlog {
			j, err := h.store.Get(ctx, id)
			if err != nil {
				return false, err
			}
			switch j.State {
			case jobs.StateSucceeded:
				if j.FinishedAt.After(finished[j.Worker]) {
					finished[j.Worker] = j.FinishedAt
				}
			case jobs.StateFailed, jobs.StateCancelled:
				return false, fmt.Errorf("backlog job %s ended %s: %s%s", id, j.State, j.LastError, h.childTail())
			default:
				clear(finished)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	err = h.waitUntil(ctx, "the idle elastic workers released", func() (bool, error) {
		for w := range finished {
			if h.prov.releasedAt(w).IsZero() {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	var rel []time.Duration
	for w, at := range finished {
		d := h.prov.releasedAt(w).Sub(at)
		rel = append(rel, d)
		s.release = append(s.release, d)
		s.beyond = append(s.beyond, d-hyIdleTTL)
	}

	// Clean up for the next run: the core job ends, the elastic workers
	// leave the registry.
	run.finish()
	err = h.waitUntil(ctx, "the core job done and the elastic workers gone", func() (bool, error) {
		j, err := h.store.Get(ctx, core)
		if err != nil {
			return false, err
		}
		if j.State != jobs.StateSucceeded {
			return false, nil
		}
		return h.noElastic()
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(h.out, "run %d/%d: reclaim %s; launch requested %s (worker registered %s); release %s after the job finished\n",
		i+1, h.opts.Runs, millis(reclaim), millis(launchAt.Sub(t1)), millis(registeredAt.Sub(t1)), joinMillis(rel))
	return nil
}

// settle waits until the controller's view is quiet: the fixed worker's
// registry entry shows its slot free, no elastic worker is left, and a
// tick has passed since. The registry's busy count changes only at the
// worker's heartbeat; a burst job submitted while the controller still
// sees the slot taken by the last run's core job would be placed on
// elastic capacity instead of being lent.
func (h *hybrid) settle(ctx context.Context) error {
	err := h.waitUntil(ctx, "the fixed slot free in the registry and no elastic worker", func() (bool, error) {
		ws, err := registry.New(h.store).Workers(ctx)
		if err != nil {
			return false, err
		}
		for _, w := range ws {
			if w.ID == h.fixed.ID() && w.Busy == 0 {
				return h.noElastic()
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	return sleep(ctx, h.opts.Tick+100*time.Millisecond)
}

// describe says where a job is and what the controller planned last, for
// errors.
func (h *hybrid) describe(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	j, err := h.store.Get(ctx, id)
	if err != nil {
		return fmt.Sprintf("job %s: %v", id, err)
	}
	var acts []string
	for _, a := range h.capacity.LastPlan().Actions {
		acts = append(acts, a.String())
	}
	return fmt.Sprintf("job %s %s in %s on %q, attempt %d: %s; last plan: %v", id, j.State, j.Queue, j.Worker, j.Attempt,
		j.LastError, acts)
}

// noElastic reports whether no elastic instance is live and no elastic
// worker is registered.
func (h *hybrid) noElastic() (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	insts, err := h.local.List(ctx)
	if err != nil {
		return false, err
	}
	for _, in := range insts {
		if in.State.Live() {
			return false, nil
		}
	}
	ws, err := registry.New(h.store).Workers(ctx)
	if err != nil {
		return false, err
	}
	for _, w := range ws {
		if w.Pool != hyFixedPool {
			return false, nil
		}
	}
	return true, nil
}

func (h *hybrid) submit(ctx context.Context, spec jobs.Spec) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	sub, err := h.store.Submit(ctx, spec, controller.Router{ElasticManaged: true}.Route(spec))
	if err != nil {
		return "", fmt.Errorf("submit %s: %w", spec.Template, err)
	}
	// As the controller process does (Submitter.OnQueued): core work wakes
	// the loop, so a reclaim does not wait for the next tick.
	if spec.Class == jobs.ClassCore && h.ctl != nil {
		h.ctl.Poke()
	}
	return sub.Job.ID, nil
}

func (h *hybrid) await(ctx context.Context, ch <-chan struct{}, what string) error {
	t := time.NewTimer(h.patience())
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%s: not reached within %s", what, h.patience())
	}
}

// waitUntil polls cond every hyRegistryPoll until it holds, fails or the
// run's patience runs out.
func (h *hybrid) waitUntil(ctx context.Context, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(h.patience())
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not reached within %s%s", what, h.patience(), h.childTail())
		}
		if err := sleep(ctx, hyRegistryPoll); err != nil {
			return err
		}
	}
}

// childTail returns the end of what the elastic workers wrote, for errors.
func (h *hybrid) childTail() string {
	b, err := os.ReadFile(filepath.Join(h.dir, "elastic.log"))
	if err != nil || len(b) == 0 {
		return ""
	}
	const keep = 2000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return "\nelastic workers' output (tail):\n" + string(b)
}

func joinMillis(ds []time.Duration) string {
	slices.Sort(ds)
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += ", "
		}
		s += millis(d)
	}
	return s
}

// recordingProvider wraps a provider to timestamp the controller's Launch
// and Release calls: the moments a reaction is decided, before any machine
// (or child process) is involved.
type recordingProvider struct {
	provider.Provider

	mu       sync.Mutex
	launches []time.Time
	releases map[string]time.Time // instance → first Release call
}

func newRecordingProvider(p provider.Provider) *recordingProvider {
	return &recordingProvider{Provider: p, releases: map[string]time.Time{}}
}

// Launch records the call, then passes it on.
func (p *recordingProvider) Launch(ctx context.Context, pool string, n int) ([]provider.Instance, error) {
	now := time.Now()
	p.mu.Lock()
	p.launches = append(p.launches, now)
	p.mu.Unlock()
	return p.Provider.Launch(ctx, pool, n)
}

// Release records the first call per instance, then passes it on.
func (p *recordingProvider) Release(ctx context.Context, id string) error {
	now := time.Now()
	p.mu.Lock()
	if _, ok := p.releases[id]; !ok {
		p.releases[id] = now
	}
	p.mu.Unlock()
	return p.Provider.Release(ctx, id)
}

// firstLaunchSince returns the first Launch call at or after t, or zero.
func (p *recordingProvider) firstLaunchSince(t time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, at := range p.launches {
		if !at.Before(t) {
			return at
		}
	}
	return time.Time{}
}

// releasedAt returns when Release was first called for id, or zero.
func (p *recordingProvider) releasedAt(id string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.releases[id]
}
