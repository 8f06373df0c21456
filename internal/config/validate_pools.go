package config

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

var poolNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// validatePools checks each pool and the set as a whole.
func validatePools(ps *problems, pools map[string]PoolConfig) {
	if len(pools) == 0 {
		ps.add("pools", "missing: declare at least one pool, for example pools: {fixed: {kind: fixed, slots: 4}}")
		return
	}
	names := make([]string, 0, len(pools))
	for name := range pools {
		names = append(names, name)
	}
	sort.Strings(names)
	// Several fixed pools are flavors (a quota per GPU model, say): each
	// must carry labels of its own, or jobs could not tell them apart and
	// the quota would be one pool under two names.
	fixedByLabels := map[string]string{}
	for _, name := range names {
		field := "pools." + name
		if !poolNameRE.MatchString(name) {
			// The name ends up in systemd instance names and worker flags.
			ps.add(field, "%q is not a pool name: use up to 32 lower-case letters, digits, '_' or '-'", name)
		}
		p := pools[name]
		p.validate(ps, field)
		if p.Kind == PoolFixed {
			key := jobs.LabelsKey(p.Labels)
			if other, ok := fixedByLabels[key]; ok {
				ps.add(field+".kind", "a second fixed pool with the labels of pools.%s: give each flavor labels of its own (such as gpu_model: A100), or add these slots to pools.%s", other, other)
			} else {
				fixedByLabels[key] = name
			}
		}
	}
}

func (p PoolConfig) validate(ps *problems, field string) {
	switch p.Kind {
	case PoolFixed, PoolOnDemand, PoolSpot:
	case "":
		ps.add(field+".kind", "missing: use fixed, ondemand or spot")
		return
	default:
		ps.add(field+".kind", "unknown pool kind %q (use fixed, ondemand or spot)", p.Kind)
		return
	}
	if p.PricePerSlotHour < 0 || math.IsNaN(p.PricePerSlotHour) || math.IsInf(p.PricePerSlotHour, 0) {
		ps.add(field+".price_per_slot_hour", "%v is not a price: use a number of 0 or more", p.PricePerSlotHour)
	}
	if strings.TrimSpace(p.Region) == "" {
		ps.add(field+".region", "must not be blank")
	} else if !queues.ValidRegion(p.Region) {
		ps.add(field+".region", "%q: use 1 to %d of a-z, 0-9 and '-' (it names the pool's regional queues)", p.Region, queues.MaxRegionLen)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Labels)) {
		if msg := jobs.LabelProblem(k, p.Labels[k]); msg != "" {
			ps.add(field+".labels."+k, "%s", msg)
		}
	}
	if p.Kind == PoolFixed {
		p.validateFixed(ps, field)
	} else {
		p.validateElastic(ps, field)
	}
}

func (p PoolConfig) validateFixed(ps *problems, field string) {
	if p.Slots <= 0 {
		ps.add(field+".slots", "a fixed pool needs slots > 0: the number of jobs its workers run at once")
	}
	// Elastic settings on a fixed pool mean the operator expects behaviour
	// Ballast will not give; say so instead of ignoring them.
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"billing", p.Billing != ""},
		{"min_billing", p.MinBilling != 0},
		{"startup_delay", p.StartupDelay != 0},
		{"idle_ttl", p.IdleTTL != 0},
		{"max_workers", p.MaxWorkers != 0},
		{"slots_per_worker", p.SlotsPerWorker != 0},
		{"cpus_per_worker", p.CPUsPerWorker != 0},
		{"memory_per_worker", p.MemoryPerWorker != 0},
	} {
		if f.set {
			ps.add(field+"."+f.name, "is for elastic pools (ondemand, spot); a fixed pool is prepaid and always on: drop it")
		}
	}
}

func (p PoolConfig) validateElastic(ps *problems, field string) {
	if p.Slots != 0 {
		ps.add(field+".slots", "is for fixed pools; an elastic pool's size is max_workers × slots_per_worker")
	}
	if !p.Billing.Valid() {
		ps.add(field+".billing", "unknown billing %q (use per_second, per_minute or per_hour)", p.Billing)
	}
	if p.MinBilling < 0 {
		ps.add(field+".min_billing", "must not be negative")
	}
	if p.StartupDelay < 0 {
		ps.add(field+".startup_delay", "must not be negative")
	}
	if p.IdleTTL < 0 {
		ps.add(field+".idle_ttl", "must not be negative")
	}
	if p.MaxWorkers < 0 {
		ps.add(field+".max_workers", "must be 0 or more (0 disables the pool)")
	}
	if p.SlotsPerWorker < 1 {
		ps.add(field+".slots_per_worker", "must be at least 1")
	}
	if !(p.CPUsPerWorker >= 0) || math.IsInf(p.CPUsPerWorker, 0) || p.CPUsPerWorker > 4096 {
		ps.add(field+".cpus_per_worker", "is %v; give the cores one worker offers, such as 32, or leave it out", p.CPUsPerWorker)
	}
	if p.MemoryPerWorker < 0 {
		ps.add(field+".memory_per_worker", "is negative; write it like 256GiB, or leave it out")
	}
}
