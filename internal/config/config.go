package config

import (
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
)

// Config is the whole configuration of a Ballast installation. The zero value
// is not usable: call WithDefaults, then Validate (Load and Parse do both).
type Config struct {
	// Namespace prefixes every Redis key and asynq queue name, so several
	// installations can share one Redis. It also seeds the NATS subject prefix
	// and stream name when those are left empty.
	Namespace string `yaml:"namespace,omitempty"`
	// AllowRawCommands lets submissions carry their own argv instead of naming
	// a template. Off by default: a bus that runs arbitrary commands is a
	// remote shell for anyone who can publish on it.
	AllowRawCommands bool `yaml:"allow_raw_commands,omitempty"`

	// Redis holds job records, the worker registry and the asynq queues.
	Redis RedisConfig `yaml:"redis,omitempty"`
	// NATS carries submissions and events.
	NATS NATSConfig `yaml:"nats,omitempty"`
	// HTTP is the API and dashboard.
	HTTP HTTPConfig `yaml:"http,omitempty"`
	// Controller paces the scheduling loop.
	Controller ControllerConfig `yaml:"controller,omitempty"`
	// Worker sets how workers poll, heartbeat, drain and keep output.
	Worker WorkerConfig `yaml:"worker,omitempty"`
	// Checkpoints, with a store, moves each job's checkpoint directory
	// between workers through object storage.
	Checkpoints CheckpointsConfig `yaml:"checkpoints,omitempty"`
	// Watermarks decide when fixed capacity is lent and elastic grown.
	Watermarks Watermarks `yaml:"watermarks,omitempty"`
	// Capacity tunes the rest of the hybrid capacity policy.
	Capacity CapacityConfig `yaml:"capacity,omitempty"`
	// Provider chooses who starts and releases elastic workers.
	Provider ProviderConfig `yaml:"provider,omitempty"`
	// Shares divide the fixed quota among teams (docs/shares.md).
	Shares SharesConfig `yaml:"shares,omitempty"`
	// Chargeback is how the cost ledger settles the quota between teams.
	Chargeback ChargebackConfig `yaml:"chargeback,omitempty"`

	// QoS isolates fixed-quota work from elastic work on each worker:
	// groups with their own CPU, memory, storage and network limits, and
	// which jobs land in which group (see docs/hybrid-capacity.md, QoS groups).
	QoS jobs.QoS `yaml:"qos,omitempty"`

	// Pools are the kinds of capacity jobs run on, by name. The name is what
	// `ballast worker --pool NAME` refers to.
	Pools map[string]PoolConfig `yaml:"pools,omitempty"`
	// Pipelines are cron-driven DAGs of template steps, by pipeline name.
	Pipelines map[string]pipeline.Pipeline `yaml:"pipelines,omitempty"`
	// Templates are the recipes jobs may name, by template name.
	Templates map[string]jobs.Template `yaml:"templates,omitempty"`
}

// HTTPConfig is the API and dashboard listener.
type HTTPConfig struct {
	// Listen is host:port. Without a token the API refuses to listen beyond
	// the loopback interface, because anyone who reaches it can run jobs.
	Listen string `yaml:"listen,omitempty"`
	// APIToken is the bearer token clients must send; prefer APITokenEnv so
	// the secret stays out of the file.
	APIToken string `yaml:"api_token,omitempty"`
	// APITokenEnv names an environment variable holding the token.
	APITokenEnv string `yaml:"api_token_env,omitempty"`
	// APITokenFile names a file holding the token (a trailing newline is
	// dropped): readable by Ballast's user only, it reaches no process
	// of another user, where an environment variable stays readable in
	// /proc by every process of the same user.
	APITokenFile string `yaml:"api_token_file,omitempty"`
}

// Token resolves the API token from the config, the environment or its
// file; empty means none is configured.
func (h HTTPConfig) Token() (string, error) {
	return resolveSecret("http.api_token", h.APIToken, h.APITokenEnv, h.APITokenFile)
}

// ControllerConfig sets the pace of the controller loop.
type ControllerConfig struct {
	// Tick is how often the leader takes a snapshot and applies a plan.
	Tick jobs.Duration `yaml:"tick,omitempty"`
	// WorkerTTL: a worker whose last heartbeat is older is dead and its jobs
	// are requeued from their last checkpoint.
	WorkerTTL jobs.Duration `yaml:"worker_ttl,omitempty"`
	// LeaderTTL is how long a leader's lease lasts without renewal; another
	// controller takes over after it lapses.
	LeaderTTL jobs.Duration `yaml:"leader_ttl,omitempty"`
	// FireGrace is how late a pipeline's scheduled time may be noticed and
	// still fire as on time (default 1m); a time noticed later was missed
	// while no controller ran, and the pipeline's catch_up policy decides.
	FireGrace jobs.Duration `yaml:"fire_grace,omitempty"`
	// RebuildEvery is how often the leader's capacity tick reads every
	// active job again instead of only those that changed (unset: 30s,
	// controller.DefaultRebuildEvery).
	// A change no signal reported (a lost job event) is seen at most this
	// late; each rebuild costs what a tick cost before the view was kept
	// (about 150 ms of controller CPU for 12,000 jobs).
	RebuildEvery jobs.Duration `yaml:"rebuild_every,omitempty"`
	// CostRetention is how long the leader keeps the usage records and
	// worker lives the cost ledger prices (default 32 days: a month of
	// reports). They take about 350 bytes of Redis per attempt, so an
	// install running 100,000 attempts a day holds about 1.1 GB at the
	// default; at least a day is kept, as the dashboard prices today.
	CostRetention jobs.Duration `yaml:"cost_retention,omitempty"`
}

// WorkerConfig sets how a worker polls, heartbeats, drains and keeps output.
type WorkerConfig struct {
	// PollInterval is asynq's TaskCheckInterval. asynq's own default (1s)
	// makes an idle worker pick up a new job about 500ms late on average.
	PollInterval jobs.Duration `yaml:"poll_interval,omitempty"`
	// Heartbeat is how often the worker refreshes its registry entry.
	Heartbeat jobs.Duration `yaml:"heartbeat,omitempty"`
	// DrainTimeout bounds how long a draining worker waits for its jobs.
	DrainTimeout jobs.Duration `yaml:"drain_timeout,omitempty"`
	// SelfFence is the share of controller.worker_ttl after the last
	// heartbeat that reached Redis at which a worker stops taking work and
	// stops its jobs (SIGTERM, then a kill half way to the TTL), so a
	// worker cut off from Redis does not run them on beside the attempts
	// the controller starts elsewhere once the TTL runs out (default 0.75,
	// at most 0.9). Raise worker_ttl, not this, to ride out longer Redis
	// stalls.
	SelfFence float64 `yaml:"self_fence,omitempty"`
	// LogDir holds each job's full output.
	LogDir string `yaml:"log_dir,omitempty"`
	// CheckpointDir holds a directory per job (BALLAST_CHECKPOINT_DIR).
	// Jobs move between workers, so in a multi-machine setup either
	// checkpoints.store is set (the directory travels through it) or this
	// must be storage every worker can read.
	CheckpointDir string `yaml:"checkpoint_dir,omitempty"`
	// JobLogLines is how many lines of each job's output are kept in Redis for
	// the CLI and the dashboard.
	JobLogLines int `yaml:"job_log_lines,omitempty"`
	// RunAs is the unprivileged user (a name, or UID:GID) a worker running
	// as root starts jobs as, so no job can read the worker's credentials
	// from /proc (docs/security.md: Jobs as another user). A template's run_as
	// overrides it. A worker that is not root refuses to start with it.
	RunAs string `yaml:"run_as,omitempty"`
}

// CapacityConfig tunes the hybrid capacity policy beyond the watermarks.
type CapacityConfig struct {
	// SpotFallbackAfter is how long a launch may stay unfilled (a stock-out)
	// before its pool counts as unavailable: spot work then goes on-demand,
	// unpinned work to another region. Set it above the pools' start-up
	// delays.
	SpotFallbackAfter jobs.Duration `yaml:"spot_fallback_after,omitempty"`
	// MaxSpotPreemptions is how many spot reclaims a job may suffer before it
	// runs on-demand only. 0 keeps every job off spot.
	MaxSpotPreemptions *int `yaml:"max_spot_preemptions,omitempty"`
	// ReleaseMargin: under per-minute or per-hour billing an idle worker is
	// released this long before its paid period ends.
	ReleaseMargin jobs.Duration `yaml:"release_margin,omitempty"`
	// CoreOverflow (rule 7, off by default) lets a core job that has waited
	// CoreMaxWait for fixed quota run on on-demand capacity instead, never
	// spot: for teams that would rather pay the on-demand premium than miss
	// a deadline.
	CoreOverflow bool `yaml:"core_overflow,omitempty"`
	// CoreMaxWait is how long a queued core job may wait before it
	// overflows (default 30m; 0 overflows as soon as fixed is full). A
	// template's or pipeline step's core_max_wait overrides it, and a step
	// of a run with a deadline overflows in time to meet it.
	CoreMaxWait *jobs.Duration `yaml:"core_max_wait,omitempty"`
}

// Watermarks are fixed-pool utilization thresholds. Above High the controller
// stops lending fixed slots and grows elastic pools; below Low it moves
// elastic work back to fixed and drains elastic workers. In between it holds,
// so the pools do not flap.
type Watermarks struct {
	// High is the utilization (0 to 1] above which lending stops.
	High float64 `yaml:"high,omitempty"`
	// Low is the utilization below which elastic work moves back; below High.
	Low float64 `yaml:"low,omitempty"`
}
