package policy

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// PoolKind is a pool's price model.
type PoolKind string

// The pool kinds. The names match the config file's.
const (
	// PoolFixed is prepaid quota, run by the operator and never taken away.
	PoolFixed PoolKind = "fixed"
	// PoolOnDemand is elastic capacity paid per use that stays until released.
	PoolOnDemand PoolKind = "ondemand"
	// PoolSpot is cheaper elastic capacity that the provider may reclaim.
	PoolSpot PoolKind = "spot"
)

// Elastic reports whether the controller starts and releases the kind's workers.
func (k PoolKind) Elastic() bool { return k == PoolOnDemand || k == PoolSpot }

// Billing is the granularity a provider bills at.
type Billing string

// The billing granularities. The names match the config file's.
const (
	// BillingPerSecond bills the time used: releasing early always saves.
	BillingPerSecond Billing = "per_second"
	// BillingPerMinute bills every started minute.
	BillingPerMinute Billing = "per_minute"
	// BillingPerHour bills every started hour: an idle worker is kept until
	// just before the hour it already paid for ends.
	BillingPerHour Billing = "per_hour"
)

// Valid reports whether b is one of the known granularities.
func (b Billing) Valid() bool {
	return b == BillingPerSecond || b == BillingPerMinute || b == BillingPerHour
}

// Unit is the length of one billed unit; an unknown granularity counts as
// per second, which never delays a release.
func (b Billing) Unit() time.Duration {
	switch b {
	case BillingPerMinute:
		return time.Minute
	case BillingPerHour:
		return time.Hour
	}
	return time.Second
}

// Pool is a set of workers with one price model.
type Pool struct {
	// Name identifies the pool; workers and launches refer to it.
	Name string
	// Kind is the price model: fixed, ondemand or spot.
	Kind PoolKind
	// Region is where the capacity is; jobs pinned to a region only go to
	// pools in it.
	Region string
	// PricePerSlotHour ranks elastic pools: the cheapest eligible one wins.
	PricePerSlotHour float64
	// Billing is the provider's billing granularity (elastic pools).
	Billing Billing
	// MinBilling is the least a started worker is billed for.
	MinBilling time.Duration
	// StartupDelay is how long a launch takes to become a worker. The policy
	// does not use it (SpotFallbackAfter already allows for it); the
	// simulator does.
	StartupDelay time.Duration
	// MaxWorkers caps the pool's workers, draining ones included.
	MaxWorkers int
	// SlotsPerWorker is how many jobs one new worker runs at once.
	SlotsPerWorker int
	// IdleTTL is how long an idle worker is kept before release is considered.
	IdleTTL time.Duration
	// Labels are what every worker of the pool carries (gpu_model, say),
	// as the config declares them. A worker's own labels are read over
	// them; scale-up launches a pool for a sized job only when they
	// include every label the job requires, since a worker not yet
	// started reports none.
	Labels map[string]string
	// CPUs and Memory, when > 0, are what one worker of an elastic pool
	// offers (cpus_per_worker, memory_per_worker in the config): scale-up
	// grows the pool for a job only when one worker holds a member's CPUs
	// and memory. Registered workers report their own.
	CPUs   float64
	Memory int64
}

// carries reports whether labels meet every requirement in req, a
// requirement naming one value or several (jobs.AnyOf).
func carries(labels, req map[string]string) bool { return jobs.Carries(labels, req) }

// PaidUntil returns when the billing already incurred by a worker started
// at started runs out, never before now: the end of the current billed
// minute or hour, and never before the minimum billing. Per-second billing
// is treated as continuous, so once its minimum is used up nothing is paid
// ahead. Releasing a worker before PaidUntil saves nothing. A zero started
// means the start is unknown and nothing counts as paid.
func (p Pool) PaidUntil(started, now time.Time) time.Time {
	if started.IsZero() {
		return time.Time{}
	}
	end := started.Add(p.MinBilling)
	if unit := p.Billing.Unit(); unit > time.Second {
		elapsed := max(now.Sub(started), 0)
		// The guard keeps a start decades ago from overflowing the product.
		if units := elapsed/unit + 1; units < (1<<62)/unit {
			end = laterOf(end, started.Add(units*unit))
		}
	}
	return laterOf(end, now)
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
