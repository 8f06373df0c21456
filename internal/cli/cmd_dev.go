package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// runDev runs the whole of Ballast in one process on embedded defaults: an
// embedded NATS server (the real nats-server), Redis from --redis or an
// in-memory one, the controller, the intake, the HTTP API and a fixed worker,
// then submits a few example jobs and prints every event.
func runDev(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "dev", "dev [--redis ADDR] [--nats-port N] [--http ADDR] [--no-demo]")
	redisAddr := fs.String("redis", "", "use this Redis (host:port); default: an embedded in-memory Redis that keeps nothing")
	natsPort := fs.Int("nats-port", 4223, "port of the embedded NATS server (-1 = any free port)")
	httpAddr := fs.String("http", "127.0.0.1:8480", "HTTP API address")
	noDemo := fs.Bool("no-demo", false, "do not submit the example jobs at start")
	quiet := fs.Bool("quiet", false, "do not print events")
	reclaimRate := fs.Float64("spot-reclaim-rate", 0, "reclaim spot workers at random: expected reclaims per spot worker per hour (0 = off)")
	verbose := fs.Bool("verbose", false, "also print every checkpoint jobs write")
	logPath := fs.String("log", "", "structured (JSON) log of every process in this dev instance (default $XDG_STATE_HOME/ballast/dev.log)")
	scenario := fs.Bool("scenario", false, "play the hybrid demo: a burst spike, a core wave that reclaims borrowed slots, then drain to zero (implies --quiet)")
	if err := parse(fs, args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ballast-dev-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// The terminal gets one line per event and the warnings; the full,
	// structured log goes to a file that outlives the instance.
	if *logPath == "" {
		*logPath = devLogFile(os.Getenv, dir)
	}
	logFile, err := openDevLog(*logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	var terminal slog.Handler = slog.NewTextHandler(e.errOut, &slog.HandlerOptions{Level: slog.LevelWarn})
	if *redisAddr == "" {
		terminal = withoutDurability{terminal} // the NOTICE below says it already
	}
	log := slog.New(slog.NewMultiHandler(
		slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo}), terminal))

	cfg := config.Dev()
	cfg.HTTP.Listen = *httpAddr
	cfg.Worker.LogDir = filepath.Join(dir, "logs")
	cfg.Worker.CheckpointDir = filepath.Join(dir, "checkpoints")
	cfg.Redis.Addr = *redisAddr
	if *redisAddr == "" {
		mr := miniredis.NewMiniRedis()
		if err := mr.StartAddr("127.0.0.1:0"); err != nil {
			return fmt.Errorf("embedded Redis: %w", err)
		}
		defer mr.Close()
		cfg.Redis.Addr = mr.Addr()
		fmt.Fprintf(e.out, "NOTICE: using an embedded in-memory Redis at %s: nothing persists when ballast dev stops.\n"+
			"        Pass --redis 127.0.0.1:6379 to use a real Redis.\n", mr.Addr())
	}
	ns, err := startEmbeddedNATS(*natsPort, filepath.Join(dir, "nats"))
	if err != nil {
		return err
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	cfg.NATS.URL = ns.ClientURL()

	rdb, err := connectRedis(ctx, cfg)
	if err != nil {
		return err
	}
	defer rdb.Close()
	nc, err := connectNATSLogged(cfg, "ballast-dev", log)
	if err != nil {
		return err
	}
	defer nc.Close()

	var st stack
	defer func() { st.stop() }() // a closure: st grows after this line
	// Elastic workers are child processes that read the same config.
	cfgFile := filepath.Join(dir, "ballast-dev.yaml")
	if err := writeConfig(cfgFile, cfg); err != nil {
		return err
	}
	cfg.Provider.Kind = config.ProviderLocal
	prov, err := newProvider(ctx, config.ProviderLocal, cfg, cfgFile, execScripts{}, log, &st)
	if err != nil {
		return err
	}
	cp, err := startControlPlane(ctx, cfg, rdb, nc, true, prov, log, &st)
	if err != nil {
		return err
	}
	w, err := startWorker(ctx, cfg, cp.store, cp.pub, workerSpec{pool: "fixed", nc: nc}, log, &st)
	if err != nil {
		return err
	}
	if !*quiet && !*scenario {
		evs := &devEvents{w: e.out, verbose: *verbose, store: cp.store}
		if err := evs.subscribe(nc, subjects(cfg)); err != nil {
			return err
		}
	}
	// The other commands find this instance by themselves: their config
	// discovery reads the dev file while no config of the user's comes
	// first. It is written once everything runs, with the address the API
	// really listens on, so its appearance means "ready".
	cfg.HTTP.Listen = cp.addr
	devFile := config.DevFile(os.Getenv)
	if devFile != "" {
		unpublish, err := publishDevConfig(devFile, cfg)
		if err != nil {
			return err
		}
		defer unpublish()
	}
	fmt.Fprintf(e.out, `ballast dev is running.
  NATS (embedded):  %s
  HTTP API:         http://%s/api/v1/jobs
  dashboard:        http://%s/dashboard
  fixed worker:     %s (%d slots)
  templates:        %v

  config:           %s
  log (JSON):       %s

In another terminal:
  ballast submit hello name=you --wait
  ballast submit steps steps=10 step_time=300ms
  ballast jobs
  ballast status
  ballast top
Press Ctrl-C to stop.
`, cfg.NATS.URL, cp.addr, cp.addr, w.ID(), cfg.Pools["fixed"].Slots, sortedTemplateNames(cfg), devConfigNote(devFile, cfgFile), *logPath)
	if *reclaimRate < 0 {
		return usageError{"--spot-reclaim-rate must not be negative"}
	}
	(&spotChaos{perHour: *reclaimRate, notice: 10 * time.Second, every: 10 * time.Second,
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1)), nc: nc, store: cp.store, cfg: cfg, log: log}).start(ctx)
	switch {
	case *scenario:
		runScenario(ctx, e, nc, cfg, cp.store)
	case !*noDemo:
		if err := submitDemo(ctx, nc, cfg); err != nil {
			return err
		}
	}
	<-ctx.Done()
	fmt.Fprintln(e.out, "stopping: draining the worker")
	return nil
}

func startEmbeddedNATS(port int, dir string) (*server.Server, error) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true})
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded NATS did not start on port %d (is it taken? use --nats-port)", port)
	}
	return ns, nil
}

// devConfigNote says where the other commands find this instance: the dev
// file, or, on a machine without a home directory, the file to export.
func devConfigNote(devFile, cfgFile string) string {
	if devFile != "" {
		return devFile + " (the other commands read it by themselves)"
	}
	return cfgFile + " (export BALLAST_CONFIG=" + cfgFile + ")"
}

// writeConfig saves the effective config so the other commands can reach
// this dev instance through BALLAST_CONFIG.
func writeConfig(path string, cfg config.Config) error {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// submitDemo sends one job of each example template over NATS, as a user would.
func submitDemo(ctx context.Context, nc *nats.Conn, cfg config.Config) error {
	c := client.NewNATS(nc, subjects(cfg))
	demo := []jobs.Submission{
		{Template: "hello", Params: raw(map[string]any{"name": "ballast"})},
		{Template: "nightly-features", Params: raw(map[string]any{"date": time.Now().Format("2006-01-02")})},
		{Template: "steps", Params: raw(map[string]any{"steps": 5, "step_time": "200ms"})},
	}
	for _, s := range demo {
		if _, ok := cfg.Templates[s.Template]; !ok {
			continue
		}
		if _, err := c.Submit(ctx, s); err != nil {
			return fmt.Errorf("demo job %s: %w", s.Template, err)
		}
	}
	return nil
}

func raw(m map[string]any) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k], _ = json.Marshal(v)
	}
	return out
}

func sortedTemplateNames(cfg config.Config) []string { return slices.Sorted(maps.Keys(cfg.Templates)) }
