package config

import (
	"net"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/workers/runas"
)

// Bounds that protect Redis and the operator from a slip of the keyboard.
const (
	maxJobLogLines = 1_000_000
	minTokenLength = 16
)

var namespaceRE = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// Validate checks a defaulted config and returns a *jobs.ValidationError that
// names every problem by field path, templates included, or nil. It reads the
// environment to report variables that are named but unset.
func (c Config) Validate() error {
	var ps problems
	if !namespaceRE.MatchString(c.Namespace) {
		ps.add("namespace", "%q is not a namespace: use 1 to 32 lower-case letters, digits or '-'", c.Namespace)
	}
	c.Redis.validate(&ps)
	nats := c.NATS
	if !namespaceRE.MatchString(c.Namespace) {
		// Names derived from a bad namespace would repeat its problem.
		if nats.SubjectPrefix == c.Namespace {
			nats.SubjectPrefix = DefaultNamespace
		}
		if nats.Stream == defaultStream(c.Namespace) {
			nats.Stream = defaultStream(DefaultNamespace)
		}
	}
	nats.validate(&ps)
	c.HTTP.validate(&ps)
	c.validateTiming(&ps)
	c.Worker.validate(&ps)
	c.Checkpoints.validate(&ps)
	c.Watermarks.validate(&ps)
	c.Capacity.validate(&ps)
	validatePools(&ps, c.Pools)
	c.validateShares(&ps)
	c.validateProvider(&ps)
	c.validatePassEnv(&ps)
	c.validateStorePassEnv(&ps)
	c.validateRunAs(&ps)
	ps.merge(c.QoS.Validate(c.Templates))
	cat, err := c.Catalog()
	ps.merge(err)
	if err == nil {
		// Steps are checked against the templates, so only with a catalog.
		for _, name := range sortedNames(c.Pipelines) {
			ps.merge(pipeline.Validate(name, c.Pipelines[name], cat))
		}
	}
	return ps.err()
}

func (h HTTPConfig) validate(ps *problems) {
	checkSecret(ps, "http.api_token", h.APIToken, h.APITokenEnv, h.APITokenFile)
	host, port, err := net.SplitHostPort(h.Listen)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		ps.add("http.listen", "%q is not host:port; write it like 127.0.0.1:8480", h.Listen)
		return
	}
	if h.APITokenFile != "" {
		// Read at start, not here: the file is usually provisioned on the
		// server only, and its length cannot be checked without it.
		return
	}
	token, err := h.Token()
	if err != nil {
		return // an unset variable is reported by checkSecret
	}
	switch {
	case token == "" && !isLoopback(host):
		ps.add("http.api_token", "the API would listen on %s, beyond this machine, without a token, and anyone who reaches it could run jobs: set api_token_env (or api_token), or listen on 127.0.0.1", h.Listen)
	case token != "" && len(token) < minTokenLength:
		ps.add("http.api_token", "the token is %d characters long; use at least %d random characters", len(token), minTokenLength)
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (c Config) validateTiming(ps *problems) {
	positive(ps, "controller.tick", c.Controller.Tick)
	positive(ps, "controller.worker_ttl", c.Controller.WorkerTTL)
	positive(ps, "controller.leader_ttl", c.Controller.LeaderTTL)
	positive(ps, "controller.fire_grace", c.Controller.FireGrace)
	// Unset is the controller's own default (controller.DefaultRebuildEvery).
	if r := c.Controller.RebuildEvery; r < 0 {
		ps.add("controller.rebuild_every", "%s is negative: use a duration of at least a tick, or leave it unset for 30s", r)
	} else if t := c.Controller.Tick; t > 0 && r > 0 && r < t {
		ps.add("controller.rebuild_every", "%s is less than a tick (controller.tick is %s); every tick would read every job: use at least %s", c.Controller.RebuildEvery, t, t)
	}
	if r := c.Controller.CostRetention; r < jobs.Duration(24*time.Hour) {
		ps.add("controller.cost_retention", "%s is less than a day; the dashboard and the cost gauges price today: use 24h or more", r)
	}
	// One late heartbeat must not make a live worker look dead and get its
	// jobs run twice, so the TTL spans at least two heartbeats.
	if hb := c.Worker.Heartbeat; hb > 0 && c.Controller.WorkerTTL < 2*hb {
		ps.add("controller.worker_ttl", "%s is less than two worker heartbeats (worker.heartbeat is %s); a live worker could be declared dead: use at least %s", c.Controller.WorkerTTL, hb, 2*hb)
	} else if f := c.Worker.SelfFence; f <= 0 || f > MaxSelfFence {
		ps.add("worker.self_fence", "%v is out of range: a share of controller.worker_ttl above 0 and at most %v, for example %v", f, MaxSelfFence, DefaultSelfFence)
	} else if at := jobs.Duration(float64(c.Controller.WorkerTTL) * f); hb > 0 && at <= hb {
		// The worker would stop every job whenever one heartbeat is late.
		ps.add("worker.self_fence", "%v of controller.worker_ttl (%s) is %s, not more than one worker heartbeat (%s): use at least %.2f, or a longer worker_ttl",
			f, c.Controller.WorkerTTL, at, hb, min(MaxSelfFence, 1.5*float64(hb)/float64(c.Controller.WorkerTTL)))
	}
	if t := c.Controller.Tick; t > 0 && c.Controller.LeaderTTL < 2*t {
		ps.add("controller.leader_ttl", "%s is less than two ticks (controller.tick is %s); the leader could lose its lease between renewals: use at least %s", c.Controller.LeaderTTL, t, 2*t)
	}
	// A scheduled time is noticed up to a tick late, and a leader handover
	// adds a lease; a shorter grace would call on-time runs missed.
	if t := c.Controller.Tick; t > 0 && c.Controller.FireGrace > 0 && c.Controller.FireGrace < 2*t {
		ps.add("controller.fire_grace", "%s is less than two ticks (controller.tick is %s); pipelines would count times noticed one slow tick late as missed: use at least %s", c.Controller.FireGrace, t, 2*t)
	}
}

func (w WorkerConfig) validate(ps *problems) {
	positive(ps, "worker.poll_interval", w.PollInterval)
	positive(ps, "worker.heartbeat", w.Heartbeat)
	positive(ps, "worker.drain_timeout", w.DrainTimeout)
	if w.LogDir == "" {
		ps.add("worker.log_dir", "missing: give a directory for job logs")
	}
	if w.CheckpointDir == "" {
		ps.add("worker.checkpoint_dir", "missing: give a directory for checkpoints")
	}
	if w.JobLogLines < 0 || w.JobLogLines > maxJobLogLines {
		ps.add("worker.job_log_lines", "must be between 1 and %d (0 means the default, %d)", maxJobLogLines, DefaultJobLogLines)
	}
	if w.RunAs != "" {
		if err := runas.Check(w.RunAs); err != nil {
			ps.add("worker.run_as", "%v", err)
		}
	}
}

func (w Watermarks) validate(ps *problems) {
	highOK := w.High > 0 && w.High <= 1
	lowOK := w.Low > 0 && w.Low < 1
	if !highOK {
		ps.add("watermarks.high", "%v is out of range: a utilization between 0 (exclusive) and 1, for example 0.70", w.High)
	}
	if !lowOK {
		ps.add("watermarks.low", "%v is out of range: a utilization between 0 and 1 (both exclusive), for example 0.40", w.Low)
	}
	if highOK && lowOK && w.Low >= w.High {
		ps.add("watermarks.low", "%v is not below watermarks.high (%v); the gap between them is what keeps pools from flapping", w.Low, w.High)
	}
}

func (c CapacityConfig) validate(ps *problems) {
	positive(ps, "capacity.spot_fallback_after", c.SpotFallbackAfter)
	positive(ps, "capacity.release_margin", c.ReleaseMargin)
	if c.ReleaseMargin.Std() >= time.Hour {
		ps.add("capacity.release_margin", "%s leaves no paid time to use: keep it well under the billing period, e.g. 2m", c.ReleaseMargin)
	}
	if c.MaxSpotPreemptions != nil && (*c.MaxSpotPreemptions < 0 || *c.MaxSpotPreemptions > 100) {
		ps.add("capacity.max_spot_preemptions", "%d is out of range: 0 (never spot) to 100", *c.MaxSpotPreemptions)
	}
	if c.CoreMaxWait != nil && *c.CoreMaxWait < 0 {
		ps.add("capacity.core_max_wait", "%s is negative: write 0 to overflow as soon as fixed is full, or a wait such as 30m", *c.CoreMaxWait)
	}
}

// positive reports a duration that is negative; zero was replaced by a default.
func positive(ps *problems, field string, d jobs.Duration) {
	if d <= 0 {
		ps.add(field, "%s must be positive (write it like 90s, 30m or 6h)", time.Duration(d))
	}
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
