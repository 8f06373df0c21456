package config

import (
	"sort"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// PolicyConfig is the capacity policy's settings from the watermarks and
// the capacity section (defaulted by WithDefaults).
func (c Config) PolicyConfig() policy.Config {
	// Unset values keep the policy's defaults: a validated config has them
	// all, a config built in code may not.
	pc := policy.DefaultConfig()
	overlay(&pc.High, c.Watermarks.High)
	overlay(&pc.Low, c.Watermarks.Low)
	overlay(&pc.SpotFallbackAfter, c.Capacity.SpotFallbackAfter.Std())
	overlay(&pc.ReleaseMargin, c.Capacity.ReleaseMargin.Std())
	if c.Capacity.MaxSpotPreemptions != nil {
		pc.MaxSpotPreemptions = *c.Capacity.MaxSpotPreemptions
	}
	pc.CoreOverflow = c.Capacity.CoreOverflow
	if c.Capacity.CoreMaxWait != nil {
		pc.CoreMaxWait = c.Capacity.CoreMaxWait.Std()
	}
	pc.Shares = c.TeamShares()
	pc.Tick = c.Controller.Tick.Std()
	if pc.Tick == 0 {
		pc.Tick = DefaultTick
	}
	return pc
}

// CoreMaxWaitByTemplate is each template's own core_max_wait, for those
// that set one: what the simulator needs (sim.Options) to overflow core
// work as the live controller does.
func (c Config) CoreMaxWaitByTemplate() map[string]time.Duration {
	var out map[string]time.Duration
	for name, t := range c.Templates {
		if t.CoreMaxWait == nil {
			continue
		}
		if out == nil {
			out = map[string]time.Duration{}
		}
		out[name] = t.CoreMaxWait.Std()
	}
	return out
}

// PolicyPools is the capacity policy's view of the configured pools, in name
// order so that plans are deterministic.
func (c Config) PolicyPools() []policy.Pool {
	names := make([]string, 0, len(c.Pools))
	for n := range c.Pools {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]policy.Pool, 0, len(names))
	for _, n := range names {
		p := c.Pools[n]
		out = append(out, policy.Pool{Name: n, Kind: p.Kind, Region: p.Region,
			PricePerSlotHour: p.PricePerSlotHour, Billing: p.Billing, MinBilling: p.MinBilling.Std(),
			StartupDelay: p.StartupDelay.Std(), MaxWorkers: p.MaxWorkers, SlotsPerWorker: p.SlotsPerWorker,
			IdleTTL: p.IdleTTL.Std(), Labels: p.Labels, CPUs: p.CPUsPerWorker, Memory: int64(p.MemoryPerWorker)})
	}
	return out
}

func overlay[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// FixedQuota is each fixed pool's prepaid slots, by pool name: what the
// quota costs whether or not its workers are up.
func (c Config) FixedQuota() map[string]int {
	out := map[string]int{}
	for name, p := range c.Pools {
		if p.Kind == PoolFixed {
			out[name] = p.Slots
		}
	}
	return out
}
