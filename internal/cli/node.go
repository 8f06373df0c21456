package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/control/telemetry"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/orchestrator/web/dashboard"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/workers"
	"github.com/ballastdev/ballast/workers/checkpoint"
	"github.com/ballastdev/ballast/workers/gpu"
	"github.com/ballastdev/ballast/workers/isolation"
)

// stack stops what was started, in reverse order. If a start fails midway,
// the caller stops the stack, rolling back what had started.
type stack []func()

func (s *stack) push(f func()) { *s = append(*s, f) }

func (s stack) stop() {
	for i := len(s) - 1; i >= 0; i-- {
		s[i]()
	}
}

// controlPlane is the controller loop, the NATS intake and the HTTP API.
type controlPlane struct {
	store *queues.Store
	pub   events.Publisher
	addr  string // the HTTP API's bound address
}

// startControlPlane starts the controller's services onto st. prov is the
// elastic capacity provider (nil: none). capacity turns the hybrid policy on.
func startControlPlane(ctx context.Context, cfg config.Config, rdb redis.UniversalClient, nc *nats.Conn, capacity bool, prov provider.Provider, log *slog.Logger, st *stack) (*controlPlane, error) {
	subj := subjects(cfg)
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := eventbus.EnsureReplicatedStream(sctx, js, cfg.NATS.Stream, subj, cfg.NATS.StreamMaxAge.Std(), max(cfg.NATS.StreamReplicas, 1)); err != nil {
		return nil, fmt.Errorf("event stream %s: %w (is JetStream enabled? start nats-server with -js)", cfg.NATS.Stream, err)
	}
	cat, err := cfg.Catalog()
	if err != nil {
		return nil, err
	}
	// One provider per process: dev runs its worker in this process too.
	if err := startTracing(ctx, "ballast-controller", st); err != nil {
		return nil, err
	}
	store := newWakingStore(rdb, cfg, nc)
	// Runs and sweeps live in their own store on the same namespace.
	fl := flows.New(store)
	// Said before any work is accepted: a Redis that forgets is only
	// noticed otherwise when a restart has already lost jobs.
	durability := controller.CheckRedis(ctx, redisinfo.New(store), log)
	pub := eventbus.NewNATSPublisher(nc, subj)
	// With the capacity policy on, burst work waits in burst and the policy
	// lends it to fixed slots; without it, burst work goes straight to loan
	// so that fixed workers run it at all.
	sub := &controller.Submitter{Catalog: cat, Store: store, Router: routerFor(cfg, capacity), Events: pub, Logger: log}
	opts := controller.Options{Tick: cfg.Controller.Tick.Std(), WorkerTTL: cfg.Controller.WorkerTTL.Std(),
		LeaderTTL: cfg.Controller.LeaderTTL.Std(), Events: pub, Logger: log,
		PriorEvents: func(ctx context.Context) (uint64, time.Time, error) { return eventbus.Stored(ctx, js, cfg.NATS.Stream) },
		FirstJobEvent: func(ctx context.Context) (string, bool, error) {
			e, ok, err := eventbus.FirstJobEvent(ctx, js, cfg.NATS.Stream, firstJobEventScan)
			return e.JobID, ok, err
		}}
	// The metrics start after the controller; a loss seen before they do
	// shows from the next tick on.
	var lossMetrics atomic.Pointer[telemetry.Metrics]
	opts.OnDataLoss = func(l *queues.DataLoss) {
		if l == nil {
			lossMetrics.Load().RedisDataLost(false, time.Time{})
		} else {
			lossMetrics.Load().RedisDataLost(true, l.At)
		}
	}
	if cfg.Redis.RecoverOnLoss {
		opts.RecoverSettle = lossSettle(cfg)
		opts.RecoverLost = func(ctx context.Context) error {
			rep, err := controller.Recover(ctx, recoverOptions(cfg, store, js, pub, capacity, log))
			if err == nil {
				log.Warn("rebuilt the jobs Redis lost from the event stream (redis.recover_on_loss)", recoverAttrs(rep)...)
			}
			return err
		}
	}
	if en, ok := prov.(provider.ExitNotifier); ok {
		opts.Exited = en.Exits()
	}
	if capacity {
		opts.Capacity = newCapacity(cfg, store, nc, prov, pub, log)
		opts.Capacity.OnShares = func(v controller.ShareView) { lossMetrics.Load().SetShares(shareMetrics(v)) }
	}
	if opts.Pipelines, err = controller.NewPipelines(controller.PipelinesOptions{Runs: fl, Jobs: store, Submitter: sub, Catalog: cat,
		Pipelines: cfg.Pipelines, Grace: cfg.Controller.FireGrace.Std(), OverflowLead: overflowLead(cfg), Events: pub, Logger: log}); err != nil {
		return nil, err
	}
	sweeps, err := controller.NewSweeps(controller.SweepsOptions{Sweeps: fl, Jobs: store, Submitter: sub, Catalog: cat, Events: pub, Logger: log})
	if err != nil {
		return nil, err
	}
	opts.Sweeps = sweeps
	ctl, err := controller.New(store, opts)
	if err != nil {
		return nil, err
	}
	// A core job may need a slot reclaimed: decide now, not at the next tick.
	// (Only this process's leader reacts; a standby's poke is a no-op tick.)
	sub.DataLoss = ctl.DataLoss
	sub.OnQueued = func(j jobs.Job) {
		if j.Spec.Class == jobs.ClassCore {
			ctl.Poke()
		}
	}
	if err := ctl.Start(ctx); err != nil {
		return nil, err
	}
	st.push(ctl.Stop)
	// A step or trial that ends should start the next one now, not at the
	// next tick. The event is only a wake-up: the records decide.
	wake, err := eventbus.OnJobEnd(nc, subj, func(events.Event) { ctl.PokeFlows() })
	if err != nil {
		return nil, err
	}
	st.push(func() { _ = wake.Unsubscribe() })
	if opts.Capacity != nil {
		// Job events name records the kept capacity view reads again
		// at the next tick; the records decide.
		hybrid := opts.Capacity
		hints, err := eventbus.OnJobChange(nc, subj, func(id string) { hybrid.Changed(id) })
		if err != nil {
			return nil, err
		}
		st.push(func() { _ = hints.Unsubscribe() })
	}

	metrics, err := startMetrics(ctx, cfg, store, nc, ctl, log, st)
	if err != nil {
		return nil, err
	}
	metrics.RedisDurability(durability.Durable(), durability.Reason())
	lossMetrics.Store(metrics)

	in, err := intake.NewNATSServer(nc, sub, intake.NATSOptions{Subjects: subj, Logger: log, Sweeps: sweeps, Jobs: store})
	if err != nil {
		return nil, err
	}
	if err := in.Start(ctx); err != nil {
		return nil, err
	}
	st.push(in.Stop)

	token, err := cfg.HTTP.Token()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return nil, fmt.Errorf("http.listen %s: %w (choose a free port)", cfg.HTTP.Listen, err)
	}
	// Streams (the dashboard's) end when the server shuts down: Shutdown
	// waits for requests, and a stream would otherwise hold it to its timeout.
	baseCtx, endStreams := context.WithCancel(context.Background())
	// The console's job page describes kept checkpoints from their
	// manifests. A store the controller cannot open costs the page those
	// figures, not the controller its start: the workers own the store.
	var ckStore *checkpoint.Store
	if cfg.Checkpoints.Enabled() {
		if ckStore, err = checkpoint.Open(ctx, cfg.Checkpoints.Store); err != nil {
			log.Warn("checkpoint store not opened: the console lists kept checkpoints without their sizes", "err", err)
			ckStore = nil
		} else {
			st.push(func() { _ = ckStore.Close() })
		}
	}
	live := &insight.Live{Source: insightSource(store, cfg)}
	handler := api.Handler(store, sub, token, api.Flows{Sweeps: sweeps, Pipelines: opts.Pipelines, Metrics: metrics.Handler(),
		Checkpoints: ckStore,
		JobEvents: func(ctx context.Context, id string) ([]events.Event, error) {
			return eventbus.History(ctx, js, cfg.NATS.Stream, subj, id)
		}},
		api.Insight{Live: live, Dashboard: dashboard.Handler(), StreamEvery: cfg.Controller.Tick.Std()})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return baseCtx }}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server stopped", "err", err)
		}
	}()
	st.push(func() {
		endStreams()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	return &controlPlane{store: store, pub: pub, addr: ln.Addr().String()}, nil
}

// startTracing installs the OTLP trace exporter when OTEL_EXPORTER_OTLP_*
// asks for one, and registers its flush on st.
func startTracing(ctx context.Context, service string, st *stack) error {
	shutdown, err := telemetry.InstallTracing(ctx, service)
	if err != nil {
		return err
	}
	st.push(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = shutdown(sctx)
	})
	return nil
}

// startMetrics serves the controller's metrics: job events counted while
// this controller leads, and a snapshot of queues, pools and cost rates
// taken every tick.
func startMetrics(ctx context.Context, cfg config.Config, store *queues.Store, nc *nats.Conn, ctl *controller.Controller, log *slog.Logger, st *stack) (*telemetry.Metrics, error) {
	m, err := telemetry.New(telemetry.Options{Namespace: telemetry.DefaultNamespace, Logger: log})
	if err != nil {
		return nil, err
	}
	st.push(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.Shutdown(sctx)
	})
	if err := m.WatchBus(linkOf(nc)); err != nil {
		return nil, err
	}
	sub, err := m.Follow(nc, subjects(cfg), ctl.Leader)
	if err != nil {
		return nil, err
	}
	st.push(func() { _ = sub.Unsubscribe() })
	col := &insight.Collector{Source: insightSource(store, cfg), Logger: log}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Poll(pctx, cfg.Controller.Tick.Std(), ctl.Leader, col.Collect)
	}()
	st.push(func() { cancel(); <-done })
	return m, nil
}

// workerSpec says which worker to start: its pool, slots (0 = the pool's)
// and registry ID ("" = generated).
type workerSpec struct {
	pool  string
	slots int
	id    string
	nc    *nats.Conn // control wake-ups (preempt, cancel); nil: heartbeat only
	// isolation is --isolation; "" is off (dev's in-process worker).
	isolation isolation.Mode
	// gpus are the GPUs of --gpus (nil: not a GPU worker); slots 0 is
	// then one per GPU.
	gpus []gpu.Device
	// mps is --gpu-mps.
	mps bool
	// cpus and memory are --cpus and --memory (0: the machine's).
	cpus   float64
	memory int64
}

// startWorker starts a worker onto st.
func startWorker(ctx context.Context, cfg config.Config, store *queues.Store, pub events.Publisher, ws workerSpec, log *slog.Logger, st *stack) (*workers.Worker, error) {
	pool, slots := ws.pool, ws.slots
	p, ok := cfg.Pools[pool]
	if !ok {
		return nil, usageError{fmt.Sprintf("--pool %q is not a configured pool (known: %s)", pool, poolNames(cfg))}
	}
	// Strict priority, first queue first. Spot serves only burst: work that
	// must not be reclaimed waits in ondemand, and core work overflowed past
	// its allowed wait (rule 7) in overflow, for on-demand workers. Elastic
	// workers also serve the regional queues of their pool's region, and
	// only theirs, so work pinned to a region stays there.
	qs := []queues.Queue{queues.QueueCore, queues.QueueLoan}
	if p.Kind.Elastic() {
		if p.Region != "" && !queues.ValidRegion(p.Region) {
			log.Warn("pool region cannot name a queue: jobs pinned to it are refused, this worker serves unpinned work only",
				"pool", pool, "region", p.Region)
		}
		qs = queues.ElasticQueues(p.Kind == config.PoolOnDemand, p.Region)
	}
	if slots == 0 && len(ws.gpus) > 0 {
		slots = len(ws.gpus)
	}
	if slots == 0 {
		slots = p.Slots
		if p.Kind.Elastic() {
			slots = p.SlotsPerWorker
		}
	}
	// Opened before the worker takes work, so a store the worker cannot
	// open stops it at start rather than at its first checkpoint. The
	// SDKs find credentials in this process's environment and files.
	var ckStore *checkpoint.Store
	if cfg.Checkpoints.Enabled() {
		var err error
		if ckStore, err = checkpoint.Open(ctx, cfg.Checkpoints.Store); err != nil {
			return nil, fmt.Errorf("checkpoints.store: %w", err)
		}
		st.push(func() { _ = ckStore.Close() })
	}
	w, err := workers.New(store, workers.Options{ID: ws.id, Pool: pool, Spot: p.Kind == config.PoolSpot, Slots: slots, Queues: qs,
		CheckpointStore: ckStore, CheckpointOptions: checkpointOptions(cfg.Checkpoints),
		PollInterval: cfg.Worker.PollInterval.Std(), Heartbeat: cfg.Worker.Heartbeat.Std(), DrainTimeout: cfg.Worker.DrainTimeout.Std(),
		WorkerTTL: cfg.Controller.WorkerTTL.Std(), SelfFence: cfg.Worker.SelfFence,
		LogDir: cfg.Worker.LogDir, CheckpointDir: cfg.Worker.CheckpointDir, LogLines: int64(cfg.Worker.JobLogLines),
		Events: pub, Logger: log, Control: ws.nc, Subjects: subjects(cfg), QoS: cfg.QoS, Isolation: ws.isolation, GPUs: ws.gpus, MPS: ws.mps,
		Labels: p.Labels, CPUs: ws.cpus, Memory: ws.memory, RunAs: cfg.Worker.RunAs, TemplateRunAs: cfg.TemplateRunAs()})
	if err != nil {
		return nil, err
	}
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	st.push(w.Stop)
	return w, nil
}

// guardProcess makes a service's environment and memory unreadable to
// other processes of its user, jobs among them, before it reads any
// secret (see workers.GuardProcess).
func guardProcess() error {
	if err := workers.GuardProcess(); err != nil {
		return fmt.Errorf("cannot keep this process's memory from other processes of its user: %w", err)
	}
	return nil
}

// overflowLead is how long an overflowed core job takes to start on
// on-demand capacity: the slowest on-demand pool's start-up delay, plus two
// ticks (one for the policy to see the wait, one for the launch).
func overflowLead(cfg config.Config) time.Duration {
	var slowest time.Duration
	for _, p := range cfg.Pools {
		if p.Kind == config.PoolOnDemand {
			slowest = max(slowest, p.StartupDelay.Std())
		}
	}
	return slowest + 2*cfg.Controller.Tick.Std()
}

func poolNames(cfg config.Config) string {
	s := ""
	for name := range cfg.Pools {
		if s != "" {
			s += ", "
		}
		s += name
	}
	return s
}

// firstJobEventScan bounds how many of the stream's oldest events a
// controller starting on a fresh namespace reads to find one about a
// job: workers announce themselves before any job runs, a few per
// worker.
const firstJobEventScan = 1000
