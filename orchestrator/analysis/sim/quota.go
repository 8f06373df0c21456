package sim

import (
	"maps"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// fixedQuota is one fixed pool's prepaid slots: always-up workers of size
// slots (the last takes what is left), billed at price per slot-hour for
// the run's span whatever their use. A fleet that buys quota per GPU
// model has one per flavor (Options.FixedSlotsByPool); otherwise there is
// at most one, Options.FixedSlots.
type fixedQuota struct {
	pool  int // index in setup.pools
	slots int
	size  int
	price float64
}

// oneQuota reads the quota the way the model had it before flavors: at
// most one fixed pool, FixedSlots slots cut by FixedWorkerSlots, and a
// pool named "fixed" added for quota without one.
func (s *setup) oneQuota(o Options, bad func(string, ...any)) {
	q := fixedQuota{pool: -1, slots: o.FixedSlots, size: o.FixedWorkerSlots}
	if q.slots < 0 {
		bad("fixed_slots is %d; write 0 for no quota", q.slots)
	}
	if q.size < 0 {
		bad("fixed_worker_slots is %d; write 0 for one fixed worker with every fixed slot", q.size)
	}
	if q.size == 0 {
		q.size = q.slots
	}
	for i, p := range s.pools {
		if p.Kind != policy.PoolFixed {
			continue
		}
		if q.pool >= 0 {
			bad("pools %q and %q are both fixed; give each its slots in fixed_slots_by_pool, or keep one fixed pool",
				s.pools[q.pool].Name, p.Name)
			continue
		}
		q.pool = i
	}
	if q.pool < 0 && q.slots > 0 {
		s.pools = append(s.pools, policy.Pool{Name: defaultFixedPool, Kind: policy.PoolFixed})
		q.pool = len(s.pools) - 1
	}
	if q.pool < 0 {
		return
	}
	q.price = s.pools[q.pool].PricePerSlotHour
	if q.price == 0 {
		q.price = o.FixedPricePerSlotHour
	}
	s.quotas = []fixedQuota{q}
	s.fixedSlots = max(q.slots, 0)
}

// quotasByPool reads Options.FixedSlotsByPool: a quota per fixed pool,
// each of its pool's machine size and price. Every fixed pool must be
// named, so that a pool left out by mistake is not silently bought at 0.
func (s *setup) quotasByPool(o Options, bad func(string, ...any)) {
	named := map[string]bool{}
	for i, p := range s.pools {
		slots, ok := o.FixedSlotsByPool[p.Name]
		if p.Kind != policy.PoolFixed {
			if ok {
				bad("fixed_slots_by_pool[%s]: pool %q is %s; name only fixed pools", p.Name, p.Name, p.Kind)
			}
			continue
		}
		if !ok {
			bad("fixed_slots_by_pool: fixed pool %q has no entry; give it its slots, 0 for none", p.Name)
			continue
		}
		named[p.Name] = true
		if slots < 0 {
			bad("fixed_slots_by_pool[%s] is %d; write 0 for no quota in the pool", p.Name, slots)
			continue
		}
		if p.SlotsPerWorker < 0 {
			bad("pools[%d].slots_per_worker is %d; write 0 for one worker holding pool %q's whole quota", i, p.SlotsPerWorker, p.Name)
			continue
		}
		q := fixedQuota{pool: i, slots: slots, size: p.SlotsPerWorker, price: p.PricePerSlotHour}
		if q.size == 0 {
			q.size = slots
		}
		if q.price == 0 {
			q.price = o.FixedPricePerSlotHour
		}
		s.quotas = append(s.quotas, q)
		s.fixedSlots += slots
	}
	for _, name := range slices.Sorted(maps.Keys(o.FixedSlotsByPool)) {
		if !named[name] && !slices.ContainsFunc(s.pools, func(p policy.Pool) bool { return p.Name == name }) {
			bad("fixed_slots_by_pool[%s]: no pool of that name; add it to pools as a fixed pool", name)
		}
	}
	if o.FixedSlots != 0 && o.FixedSlots != s.fixedSlots {
		bad("fixed_slots is %d but fixed_slots_by_pool sums to %d; give the quota per pool and fixed_slots 0", o.FixedSlots, s.fixedSlots)
	}
	if o.FixedWorkerSlots != 0 {
		bad("fixed_worker_slots is %d with fixed_slots_by_pool; size each fixed pool's workers with its slots_per_worker", o.FixedWorkerSlots)
	}
}

// startQuotas registers the fixed workers of every quota, pool by pool in
// Options order, so worker IDs (which the policy breaks ties by) follow it.
func (s *sim) startQuotas() {
	for _, q := range s.quotas {
		for left := q.slots; left > 0; left -= q.size {
			s.fixedWs = append(s.fixedWs, s.newWorker(int32(q.pool), int32(min(left, q.size)), 0))
		}
	}
	if len(s.fixedWs) > 0 {
		s.fixed = s.fixedWs[0]
	}
}

// chargeQuotas bills every quota for the span and returns what the quota
// cost in all.
func (s *sim) chargeQuotas(span float64) float64 {
	total := 0.0
	for _, q := range s.quotas {
		u := &s.pools[q.pool].use
		u.FixedSlots = q.slots
		u.Cost = float64(q.slots) * q.price * span
		total += u.Cost
	}
	return total
}
