package config

import (
	"sort"

	"github.com/ballastdev/ballast/orchestrator/policy"
)

// PolicyConfig is the capacity policy's settings from the watermarks and
// the capacity section (defaulted by WithDefaults).
func (c Config) PolicyConfig() policy.Config {
	pc := policy.DefaultConfig()
	pc.High, pc.Low = c.Watermarks.High, c.Watermarks.Low
	pc.SpotFallbackAfter = c.Capacity.SpotFallbackAfter.Std()
	pc.ReleaseMargin = c.Capacity.ReleaseMargin.Std()
	if c.Capacity.MaxSpotPreemptions != nil {
		pc.MaxSpotPreemptions = *c.Capacity.MaxSpotPreemptions
	}
	return pc
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
		out = append(out, policy.Pool{Name: n, Kind: policy.PoolKind(p.Kind), Region: p.Region,
			PricePerSlotHour: p.PricePerSlotHour, Billing: policy.Billing(p.Billing), MinBilling: p.MinBilling.Std(),
			StartupDelay: p.StartupDelay.Std(), MaxWorkers: p.MaxWorkers, SlotsPerWorker: p.SlotsPerWorker,
			IdleTTL: p.IdleTTL.Std()})
	}
	return out
}
