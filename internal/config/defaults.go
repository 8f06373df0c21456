package config

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"

	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// Defaults. A zero value in the file means "use the default", so these are
// also what an operator gets by leaving a field out.
const (
	DefaultNamespace     = "ballast"
	DefaultRedisAddr     = "127.0.0.1:6379"
	DefaultNATSURL       = "nats://127.0.0.1:4222"
	DefaultListen        = "127.0.0.1:8480"
	DefaultRegion        = "local"
	DefaultJobLogLines   = 10000
	DefaultWatermarkHigh = 0.70
	DefaultWatermarkLow  = 0.40

	DefaultDialTimeout  = 2 * time.Second
	DefaultStreamMaxAge = 7 * 24 * time.Hour
	DefaultTick         = time.Second
	DefaultWorkerTTL    = 4 * time.Second
	DefaultLeaderTTL    = 5 * time.Second
	// DefaultPollInterval replaces asynq's 1s check interval, which makes an
	// idle worker start a new job about half a second late on average.
	DefaultPollInterval = 25 * time.Millisecond
	DefaultHeartbeat    = 500 * time.Millisecond
	DefaultDrainTimeout = 5 * time.Minute
	DefaultIdleTTL      = 2 * time.Minute
	// DefaultCostRetention keeps a month of cost reports, a day to spare.
	// It is insight.Retention, which config does not import (a test in
	// the cli package holds the two equal).
	DefaultCostRetention = 32 * 24 * time.Hour
	// DefaultSelfFence and MaxSelfFence are workers.DefaultSelfFence and
	// workers.MaxSelfFence, which config does not import.
	DefaultSelfFence = 0.75
	MaxSelfFence     = 0.9
)

// WithDefaults returns a copy with every field left empty filled in. The
// receiver and its maps are not modified.
func (c Config) WithDefaults() Config {
	setDefault(&c.Namespace, DefaultNamespace)
	c.QoS = c.QoS.WithDefaults()

	setDefault(&c.Redis.Mode, RedisStandalone)
	if c.Redis.Mode == RedisStandalone {
		setDefault(&c.Redis.Addr, DefaultRedisAddr)
	}
	setDefault(&c.Redis.DialTimeout, jobs.Duration(DefaultDialTimeout))

	setDefault(&c.NATS.URL, DefaultNATSURL)
	setDefault(&c.NATS.SubjectPrefix, c.Namespace)
	setDefault(&c.NATS.Stream, defaultStream(c.Namespace))
	setDefault(&c.NATS.StreamMaxAge, jobs.Duration(DefaultStreamMaxAge))
	setDefault(&c.NATS.StreamReplicas, 1)

	setDefault(&c.HTTP.Listen, DefaultListen)

	setDefault(&c.Controller.Tick, jobs.Duration(DefaultTick))
	setDefault(&c.Controller.WorkerTTL, jobs.Duration(DefaultWorkerTTL))
	setDefault(&c.Controller.LeaderTTL, jobs.Duration(DefaultLeaderTTL))
	setDefault(&c.Controller.FireGrace, jobs.Duration(pipeline.FireGrace))
	setDefault(&c.Controller.CostRetention, jobs.Duration(DefaultCostRetention))

	setDefault(&c.Worker.PollInterval, jobs.Duration(DefaultPollInterval))
	setDefault(&c.Worker.Heartbeat, jobs.Duration(DefaultHeartbeat))
	setDefault(&c.Worker.DrainTimeout, jobs.Duration(DefaultDrainTimeout))
	setDefault(&c.Worker.SelfFence, DefaultSelfFence)
	state := stateDir()
	setDefault(&c.Worker.LogDir, filepath.Join(state, "logs"))
	setDefault(&c.Worker.CheckpointDir, filepath.Join(state, "checkpoints"))
	setDefault(&c.Worker.JobLogLines, DefaultJobLogLines)
	c.Checkpoints = c.Checkpoints.withDefaults()

	setDefault(&c.Watermarks.High, DefaultWatermarkHigh)
	setDefault(&c.Watermarks.Low, DefaultWatermarkLow)

	def := policy.DefaultConfig()
	setDefault(&c.Capacity.SpotFallbackAfter, jobs.Duration(def.SpotFallbackAfter))
	setDefault(&c.Capacity.ReleaseMargin, jobs.Duration(def.ReleaseMargin))
	if c.Capacity.MaxSpotPreemptions == nil {
		n := def.MaxSpotPreemptions
		c.Capacity.MaxSpotPreemptions = &n
	}
	if c.Capacity.CoreMaxWait == nil {
		w := jobs.Duration(def.CoreMaxWait)
		c.Capacity.CoreMaxWait = &w
	}

	setDefault(&c.Provider.Kind, ProviderNone)
	c.Provider.Kubernetes = c.Provider.Kubernetes.withDefaults()

	if c.Pools != nil {
		pools := make(map[string]PoolConfig, len(c.Pools))
		for name, p := range c.Pools {
			pools[name] = p.withDefaults()
		}
		c.Pools = pools
	}
	// After the pools: the default borrow limit is the fixed quota.
	c.Shares = c.Shares.withDefaults(c.FixedSlots())
	// Templates are defaulted by jobs.NewCatalog; cloning keeps the copy's
	// map independent of the receiver's all the same.
	c.Templates = maps.Clone(c.Templates)
	if c.Pipelines != nil {
		pipes := make(map[string]pipeline.Pipeline, len(c.Pipelines))
		for name, p := range c.Pipelines {
			pipes[name] = p.WithDefaults()
		}
		c.Pipelines = pipes
	}
	return c
}

func (p PoolConfig) withDefaults() PoolConfig {
	setDefault(&p.Region, DefaultRegion)
	if !p.Kind.Elastic() {
		return p
	}
	setDefault(&p.Billing, BillingPerSecond)
	setDefault(&p.SlotsPerWorker, 1)
	setDefault(&p.IdleTTL, jobs.Duration(DefaultIdleTTL))
	return p
}

// stateDir is where workers keep logs and checkpoints by default, following
// the XDG base directory convention. Without a home directory (some service
// accounts) it falls back to the temporary directory rather than leaving the
// field empty.
func stateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "ballast")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "state", "ballast")
	}
	return filepath.Join(os.TempDir(), "ballast")
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// defaultStream derives the event stream's name from the namespace, so two
// installations sharing one NATS keep separate histories.
func defaultStream(namespace string) string {
	return strings.ToUpper(strings.ReplaceAll(namespace, "-", "_")) + "_EVENTS"
}
