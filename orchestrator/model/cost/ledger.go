package cost

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// Ledger is everything Compute prices: the pools with their prices and
// billing, the fixed quota, the elastic workers' lives and the job attempts,
// over the window [From, Until).
type Ledger struct {
	// Pools are the pools the other entries name, with their kind, price
	// per slot-hour, billing granularity, MinBilling and SlotsPerWorker.
	Pools []policy.Pool
	// Quotas are the fixed quota: one per fixed pool that is used.
	Quotas []Quota
	// Workers are the elastic workers alive at some time in the window.
	Workers []WorkerSpan
	// Usage has one entry per attempt of a job on a pool.
	Usage []Usage
	// From and Until bound the window; both are required.
	From, Until time.Time
	// Location sets the day boundaries of the per-day view; nil means UTC.
	Location *time.Location
}

// WorkerSpan is an elastic worker's billed life.
type WorkerSpan struct {
	// ID names the worker in errors; IDs that are set must be unique.
	ID string
	// Pool is the elastic pool the worker belongs to.
	Pool string
	// Slots is how many jobs the worker runs at once; zero means the pool's
	// SlotsPerWorker, which is what the controller launches.
	Slots int
	// Start is when billing started: the launch request or the start,
	// whichever the provider bills from.
	Start time.Time
	// End is the release; zero means still running, billed up to Until.
	End time.Time
}

// Usage is one attempt of a job on a pool: a job stopped twice (reclaimed,
// migrated, or its spot worker taken back) has three.
type Usage struct {
	// JobID identifies the job; all its attempts share Team and Template.
	JobID string
	// Team and Template group jobs in the report.
	Team, Template string
	// Pool is where the attempt ran.
	Pool string
	// Slots is how many slots the attempt held, at least one.
	Slots int
	// Share, when > 0, is the thousandths of one GPU a one-slot attempt
	// used (gpu_share): it is billed at that part, and attempts sharing a
	// GPU fill a slot together.
	Share int
	// Start and End bound the attempt; a zero End means still running,
	// counted up to Until.
	Start, End time.Time
	// LostWork is the work thrown away when the attempt was stopped: the
	// time since its last checkpoint. Zero for an attempt that finished,
	// still runs, or checkpointed just before being stopped.
	LostWork time.Duration
}

// Quota is prepaid fixed capacity: a fixed cost over the window, whether it
// is used or not.
type Quota struct {
	// Pool is the fixed pool the quota is for.
	Pool string
	// Slots is the quota's size.
	Slots int
	// PricePerSlotHour is the amortized price of one slot for one hour. It,
	// not the pool's PricePerSlotHour, prices the quota.
	PricePerSlotHour float64
}

// gpus is what the attempt used, in slots: its slots, or its share of one.
func (u Usage) gpus() float64 { return jobs.SlotsUsed(u.Slots, u.Share) }

// Milli is what the attempt used in thousandths of a slot, the unit
// capacity is checked in.
func (u Usage) Milli() int { return jobs.MilliUsed(u.Slots, u.Share) }
