package bench

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// HybridOptions configures RunHybrid.
type HybridOptions struct {
	// RedisAddr is the Redis server (host:port).
	RedisAddr string
	// Runs is how many times each measure is repeated.
	Runs int
	// Tick is the controller's loop period. The default is the production
	// default, so that the figures are what an installation would see.
	Tick time.Duration
	// Grace is the grace period of the lent job that a reclaim preempts: how
	// long its worker would wait for it to stop. The bench's lent job stops
	// as soon as it is asked to, so the reclaim figure excludes the grace by
	// construction; HybridResult.VictimStop shows how little of it was used.
	Grace time.Duration
	// Out receives progress lines and warnings (nil = discarded).
	Out io.Writer
	// Binary is the ballast binary the Local provider starts for elastic
	// workers (`Binary worker --config F --pool P --id ID`); default: this
	// executable, which is right for `ballast-tools bench-hybrid`.
	Binary string
}

// Defaults of HybridOptions.
const (
	DefaultHybridRuns  = 5
	DefaultHybridTick  = time.Second
	DefaultHybridGrace = 10 * time.Second
)

// WithDefaults returns a copy with every unset field filled in. Binary is
// left empty: the provider resolves it to this executable.
func (o HybridOptions) WithDefaults() HybridOptions {
	if o.RedisAddr == "" {
		o.RedisAddr = DefaultRedisAddr
	}
	if o.Runs == 0 {
		o.Runs = DefaultHybridRuns
	}
	if o.Tick == 0 {
		o.Tick = DefaultHybridTick
	}
	if o.Grace == 0 {
		o.Grace = DefaultHybridGrace
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return o
}

// Validate names every bad option.
func (o HybridOptions) Validate() error {
	var errs []error
	if o.RedisAddr == "" {
		errs = append(errs, errors.New("redis_addr: must not be empty"))
	}
	if o.Runs < 1 || o.Runs > 100 {
		errs = append(errs, fmt.Errorf("runs: %d is out of range (1..100)", o.Runs))
	}
	if o.Tick < 10*time.Millisecond || o.Tick > 10*time.Second {
		errs = append(errs, fmt.Errorf("tick: %s is out of range (10ms..10s)", o.Tick))
	}
	if o.Grace < time.Second || o.Grace > time.Hour {
		errs = append(errs, fmt.Errorf("grace: %s is out of range (1s..1h)", o.Grace))
	}
	return errors.Join(errs...)
}
