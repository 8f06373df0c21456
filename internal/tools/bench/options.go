package bench

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Options configures Run.
type Options struct {
	// RedisAddr is the Redis server (host:port).
	RedisAddr string
	// Jobs is how many tasks, then jobs, the throughput runs push through.
	Jobs int
	// Rounds splits each throughput run into this many rounds of
	// Jobs/Rounds, run in turn with the other two (raw asynq draining, raw
	// asynq end to end, Ballast), the order rotated each round. A minute
	// in which the machine slows then falls on every side of the ratio
	// instead of on whichever run it happened to meet.
	Rounds int
	// Producers is how many goroutines submit concurrently.
	Producers int
	// Slots is the consumer concurrency, the same for asynq and Ballast.
	Slots int
	// PollInterval is how often an idle consumer looks for work (asynq's
	// TaskCheckInterval, the Ballast worker's PollInterval).
	PollInterval time.Duration
	// LatencySamples is how many one-at-a-time submissions each latency run
	// makes.
	LatencySamples int
	// NATSURL is the NATS server of the submission phase (default
	// DefaultNATSURL); SubmissionJobs is how many jobs it submits each way
	// (default jobs.MaxBatchJobs); NoSubmission skips it.
	NATSURL        string
	SubmissionJobs int
	NoSubmission   bool
	// Out receives progress lines and worker warnings (nil = discarded).
	Out io.Writer
}

// Defaults of Options.
const (
	DefaultRedisAddr      = "127.0.0.1:6379"
	DefaultJobs           = 20000
	DefaultRounds         = 4
	DefaultProducers      = 8
	DefaultSlots          = 32
	DefaultPollInterval   = 25 * time.Millisecond
	DefaultLatencySamples = 200
)

// WithDefaults returns a copy with every unset field filled in.
func (o Options) WithDefaults() Options {
	if o.RedisAddr == "" {
		o.RedisAddr = DefaultRedisAddr
	}
	if o.Jobs == 0 {
		o.Jobs = DefaultJobs
	}
	if o.Rounds == 0 {
		o.Rounds = DefaultRounds
	}
	if o.Producers == 0 {
		o.Producers = DefaultProducers
	}
	if o.Slots == 0 {
		o.Slots = DefaultSlots
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.LatencySamples == 0 {
		o.LatencySamples = DefaultLatencySamples
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return o
}

// Validate names every bad option. The upper bounds keep a typo from turning
// a benchmark into a flood of the shared Redis.
func (o Options) Validate() error {
	var errs []error
	if o.RedisAddr == "" {
		errs = append(errs, errors.New("redis_addr: must not be empty"))
	}
	if o.Jobs < 1 || o.Jobs > 1_000_000 {
		errs = append(errs, fmt.Errorf("jobs: %d is out of range (1..1000000)", o.Jobs))
	}
	if o.Rounds < 1 || o.Rounds > 100 || o.Rounds > o.Jobs {
		errs = append(errs, fmt.Errorf("rounds: %d is out of range (1..100, and at most jobs)", o.Rounds))
	}
	if o.Producers < 1 || o.Producers > 1024 {
		errs = append(errs, fmt.Errorf("producers: %d is out of range (1..1024)", o.Producers))
	}
	// The same range the worker accepts, so a valid bench never fails in
	// workers.New.
	if o.Slots < 1 || o.Slots > 4096 {
		errs = append(errs, fmt.Errorf("slots: %d is out of range (1..4096)", o.Slots))
	}
	if o.PollInterval < time.Millisecond || o.PollInterval > 10*time.Second {
		errs = append(errs, fmt.Errorf("poll_interval: %s is out of range (1ms..10s)", o.PollInterval))
	}
	if o.SubmissionJobs < 0 || o.SubmissionJobs > 1_000_000 {
		errs = append(errs, fmt.Errorf("submission_jobs: %d is out of range (0 for the default, up to 1000000)", o.SubmissionJobs))
	}
	if o.LatencySamples < 1 || o.LatencySamples > 100_000 {
		errs = append(errs, fmt.Errorf("latency_samples: %d is out of range (1..100000)", o.LatencySamples))
	}
	return errors.Join(errs...)
}
