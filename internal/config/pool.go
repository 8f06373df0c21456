package config

import (
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// PoolKind is the price model of a pool. It is the policy's own type, so the
// config file and the scheduler cannot disagree on the names.
type PoolKind = policy.PoolKind

// The pool kinds. Fixed capacity is prepaid and always on; on-demand and spot
// capacity is started and released by the controller and paid per use.
const (
	PoolFixed    = policy.PoolFixed
	PoolOnDemand = policy.PoolOnDemand
	PoolSpot     = policy.PoolSpot
)

// Billing is the granularity an elastic provider bills at (the policy's type).
type Billing = policy.Billing

// The billing granularities.
const (
	BillingPerSecond = policy.BillingPerSecond
	BillingPerMinute = policy.BillingPerMinute
	BillingPerHour   = policy.BillingPerHour
)

// PoolConfig describes one pool of workers with one price model.
type PoolConfig struct {
	// Kind is fixed, ondemand or spot.
	Kind PoolKind `yaml:"kind,omitempty"`
	// Region is where the capacity is; reported with costs.
	Region string `yaml:"region,omitempty"`
	// PricePerSlotHour is the cost of one slot for one hour, in the
	// installation's currency. For fixed quota it is the amortized price.
	PricePerSlotHour float64 `yaml:"price_per_slot_hour,omitempty"`

	// Slots is the fixed pool's total capacity (fixed pools only).
	Slots int `yaml:"slots,omitempty"`

	// Billing is the granularity the provider bills at (elastic pools only).
	Billing Billing `yaml:"billing,omitempty"`
	// MinBilling is the least a started worker is billed for (elastic only).
	MinBilling jobs.Duration `yaml:"min_billing,omitempty"`
	// StartupDelay is how long a new worker takes to take work (elastic only);
	// the policy weighs it against waiting for fixed slots.
	StartupDelay jobs.Duration `yaml:"startup_delay,omitempty"`
	// IdleTTL is how long an idle elastic worker is kept before release; under
	// hourly billing the policy keeps it until the paid hour ends instead.
	IdleTTL jobs.Duration `yaml:"idle_ttl,omitempty"`
	// MaxWorkers caps the pool's workers (elastic only); 0 disables the pool.
	MaxWorkers int `yaml:"max_workers,omitempty"`
	// SlotsPerWorker is how many jobs one elastic worker runs at once.
	SlotsPerWorker int `yaml:"slots_per_worker,omitempty"`
	// Labels describe every worker of the pool (gpu_model: H100, say):
	// its workers report them, a template's requires are matched against
	// them, and only a pool declaring what a job requires is grown for it.
	Labels map[string]string `yaml:"labels,omitempty"`
	// CPUsPerWorker and MemoryPerWorker are what one elastic worker
	// offers to jobs that ask for cpus or memory: scale-up launches the
	// pool only for a job one worker can hold, and plan and simulate give
	// its workers as much. 0 leaves them to what workers report.
	CPUsPerWorker   float64       `yaml:"cpus_per_worker,omitempty"`
	MemoryPerWorker jobs.ByteSize `yaml:"memory_per_worker,omitempty"`
}
