package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/buslink"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// configFlag registers --config. When it is not given, parse fills it in
// by config.Discover, so every command finds the same file the same way.
func configFlag(fs *flag.FlagSet) *string {
	v := &configValue{}
	fs.Var(v, "config", "config `FILE` (default: $BALLAST_CONFIG, ./ballast.yaml, "+
		"$XDG_CONFIG_HOME/ballast/config.yaml, a running ballast dev's $XDG_CONFIG_HOME/ballast/dev.yaml; none = built-in defaults)")
	return &v.path
}

// configValue is the --config flag: the path, and whether it was given.
type configValue struct {
	path string
	set  bool
}

func (v *configValue) String() string { return v.path }

func (v *configValue) Set(s string) error {
	v.path, v.set = s, true
	return nil
}

// resolveConfigFlag runs config discovery for a flag set with --config that
// was not given. When no file is found it says so on notices (stderr),
// once, naming the Redis and NATS the defaults reach: a
// command that silently talks to the wrong Redis reads as "no jobs".
func resolveConfigFlag(fs *flag.FlagSet, notices io.Writer) error {
	f := fs.Lookup("config")
	if f == nil {
		return nil
	}
	v, ok := f.Value.(*configValue)
	if !ok || v.set {
		return nil
	}
	v.set = true // a second parse of the same flags decides nothing new
	found := config.Discover("", os.Getenv)
	v.path = found.Path
	if found.Path == "" {
		d := config.Dev()
		fmt.Fprintf(notices, "ballast: no config file found; using built-in defaults (Redis %s, NATS %s). "+
			"Pass --config, set $%s, or run ballast dev.\n", d.Redis.Addr, d.NATS.URL, config.EnvConfig)
	}
	return nil
}

// loadConfig reads the config file, or the built-in defaults without one.
func loadConfig(path string) (config.Config, error) {
	if path == "" {
		return config.Dev(), nil
	}
	return config.Load(path)
}

// connectRedis opens and pings Redis in the configured topology
// (redis.mode), through config.NewRedisClient like every other process.
func connectRedis(ctx context.Context, cfg config.Config) (redis.UniversalClient, error) {
	c, err := config.NewRedisClient(cfg.Redis, 64)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("cannot reach Redis (%s) at %s: %w (start it, or pass --config with the right redis.addr, redis.addrs or redis.mode)",
			cfg.Redis.Topology(), strings.Join(cfg.Redis.Endpoints(), ", "), err)
	}
	return c, nil
}

// connectNATS connects to NATS with the config's auth, for a command
// that lives a moment: an outage is logged to stderr as a warning.
func connectNATS(cfg config.Config, name string) (*nats.Conn, error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return connectNATSLogged(cfg, name, log)
}

// links are the health of the connections this process made, for the
// metrics of the process that serves them (see startMetrics).
var links sync.Map // *nats.Conn -> *buslink.Link

// connectNATSLogged connects to NATS with the config's auth, and logs every
// disconnect, reconnect and close of the connection to log.
func connectNATSLogged(cfg config.Config, name string, log *slog.Logger) (*nats.Conn, error) {
	opts, err := cfg.NATS.Options()
	if err != nil {
		return nil, err
	}
	link, watch := buslink.Watch(log, name, time.Now)
	opts = append(append(opts, nats.Name(name), nats.Timeout(3*time.Second)), watch...)
	nc, err := nats.Connect(cfg.NATS.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("cannot reach NATS at %s: %w (start nats-server -js, or fix nats.url)", cfg.NATS.URL, err)
	}
	link.Connected(nc)
	links.Store(nc, link)
	return nc, nil
}

// linkOf is the health of a connection made by connectNATS, nil for one
// made otherwise.
func linkOf(nc *nats.Conn) *buslink.Link {
	if l, ok := links.Load(nc); ok {
		return l.(*buslink.Link)
	}
	return nil
}

func newStore(rdb redis.UniversalClient, cfg config.Config) *queues.Store {
	return queues.NewStore(rdb, storeOptions(cfg))
}

// storeOptions are the options every process's store takes from the
// config.
func storeOptions(cfg config.Config) queues.StoreOptions {
	return queues.StoreOptions{Namespace: cfg.Namespace,
		WaitReplicas: cfg.Redis.WaitReplicas, WaitTimeout: cfg.Redis.WaitTimeout.Std()}
}

// newWakingStore is newStore for processes with a NATS connection: a cancel
// recorded for a running job (CLI, API, sweeps, pipelines) also wakes the
// job's worker, so the job stops at once rather than at its next heartbeat,
// and a cancel that ends a queued job announces it (no worker will).
func newWakingStore(rdb redis.UniversalClient, cfg config.Config, nc *nats.Conn) *queues.Store {
	pub := eventbus.NewNATSPublisher(nc, subjects(cfg))
	o := storeOptions(cfg)
	o.CancelWaker = workers.NATSControl{Conn: nc, Subjects: subjects(cfg)}
	o.OnQueuedCancel = announceCancel(pub)
	return queues.NewStore(rdb, o)
}

// announceCancel publishes job.cancelled for a job a cancel ended before
// it started, under the ID its worker would have used, so that a repeat is
// stored once. A lost event delays followers by their poll at most.
func announceCancel(pub events.Publisher) func(context.Context, string, int, time.Time) {
	return func(ctx context.Context, id string, attempt int, at time.Time) {
		e := events.Event{ID: events.JobEventID(id, attempt, events.TypeJobCancelled), Type: events.TypeJobCancelled,
			JobID: id, Attempt: attempt, State: jobs.StateCancelled, Reason: "cancelled", Time: at}
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = pub.Publish(pctx, e)
	}
}

func subjects(cfg config.Config) events.Subjects {
	return events.Subjects{Prefix: cfg.NATS.SubjectPrefix}
}
