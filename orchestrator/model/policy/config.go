package policy

import (
	"fmt"
	"reflect"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
)

// Config holds the policy's thresholds. Per-pool settings (prices, billing,
// idle TTL, sizes) travel with the pools in the snapshot.
//
// There is no WithDefaults: several fields have a meaningful zero (Low 0
// switches rule 4 off, MaxSpotPreemptions 0 keeps every job off spot,
// SpotFallbackAfter 0 never falls back), so filling zeros would make those
// settings impossible to write. Start from [DefaultConfig] and overlay.
type Config struct {
	// High is the fixed utilization at or above which nothing more is lent
	// to fixed quota and pending burst work waits for elastic capacity.
	High float64
	// Low is the fixed utilization below which elastic work is moved back to
	// fixed quota and elastic workers are drained.
	Low float64
	// SpotFallbackAfter is how long a launch may stay unfilled (a stock-out)
	// before its pool counts as unavailable: spot-eligible work then goes
	// on-demand, and work that any region may run goes to the next cheapest
	// pool, in another region if need be.
	// Set it above the spot pools' start-up delay. Zero never falls back.
	SpotFallbackAfter time.Duration
	// MaxSpotPreemptions is how many spot reclaims a job may suffer before it
	// runs on-demand only: a job that keeps losing its spot worker makes no
	// progress, however cheap the slot.
	MaxSpotPreemptions int
	// CoreOverflow enables rule 7: a core job that cannot get a fixed slot
	// for CoreMaxWait may run on on-demand capacity (never spot).
	CoreOverflow bool
	// CoreMaxWait is how long a queued core job may wait before rule 7.
	CoreMaxWait time.Duration
	// ReleaseMargin is how long before the end of a paid billing unit an idle
	// worker is released, so the release lands before the next unit starts.
	// Make it at least the controller tick; with per-minute or per-hour
	// pools it must not be zero (Snapshot.Validate says so), or the release
	// window would never be seen.
	ReleaseMargin time.Duration
	// Shares divides the fixed quota among teams (rule 9); the zero value
	// is off and every rule behaves as without teams.
	Shares shares.Config
	// Tick is the controller's tick: work may borrow another team's share
	// only if its grace plus a tick fits the lender's reclaim_within.
	Tick time.Duration
}

// DefaultConfig returns the thresholds from the design.
func DefaultConfig() Config {
	return Config{
		High:               0.70,
		Low:                0.40,
		SpotFallbackAfter:  10 * time.Minute,
		MaxSpotPreemptions: 3,
		CoreOverflow:       false,
		CoreMaxWait:        30 * time.Minute,
		ReleaseMargin:      2 * time.Minute,
	}
}

// Validate returns every problem at once, each naming its field.
func (c Config) Validate() error {
	var p problems
	c.validate(&p, "policy")
	return p.err()
}

func (c Config) validate(p *problems, at string) {
	if !(c.High > 0 && c.High <= 1) {
		p.add(at+".high", fmt.Sprintf("is %v; write a fraction of fixed slots in (0, 1], such as 0.70", c.High))
	}
	if !(c.Low >= 0 && c.Low < c.High) {
		p.add(at+".low", fmt.Sprintf("is %v; it must be at least 0 and below high (%v), such as 0.40", c.Low, c.High))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"spot_fallback_after", c.SpotFallbackAfter},
		{"core_max_wait", c.CoreMaxWait},
		{"release_margin", c.ReleaseMargin},
	} {
		if d.v < 0 {
			p.add(at+"."+d.name, fmt.Sprintf("is %v; a duration here cannot be negative", d.v))
		}
	}
	if c.MaxSpotPreemptions < 0 {
		p.add(at+".max_spot_preemptions", fmt.Sprintf("is %d; write 0 to keep jobs off spot, or a positive count", c.MaxSpotPreemptions))
	}
}

// problems collects field errors in the jobs package's error types, so every
// validation error in Ballast reads and unwraps the same way.
type problems struct{ list []*jobs.FieldError }

func (p *problems) add(field, msg string) {
	p.list = append(p.list, &jobs.FieldError{Field: field, Message: msg})
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &jobs.ValidationError{Problems: p.list}
}

// IsZero reports whether c is the zero Config, which callers such as the
// simulator read as "use DefaultConfig". Config holds slices (the
// shares), so it cannot be compared with == itself.
func (c Config) IsZero() bool {
	return reflect.DeepEqual(c, Config{})
}
