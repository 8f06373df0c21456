package cost

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// Report is what a ledger's window cost, in the pools' currency, with hours
// as fractional hours. Every list is sorted by its name or day.
type Report struct {
	// From and Until are the ledger's window, Location its time zone.
	From     time.Time      `json:"from"`
	Until    time.Time      `json:"until"`
	Location *time.Location `json:"-"`
	// Pools has one row per ledger pool, by name.
	Pools []PoolRow `json:"pools"`
	// Fixed sums the quotas.
	Fixed FixedSummary `json:"fixed"`
	// Jobs, Teams and Templates are what was charged to each, by name.
	Jobs      []JobRow   `json:"jobs"`
	Teams     []GroupRow `json:"teams"`
	Templates []GroupRow `json:"templates"`
	// Days has one row per calendar day that overlaps the window.
	Days []DayRow `json:"days"`
	// Total is the whole window.
	Total Totals `json:"total"`
}

// Figures is what a set of job attempts was charged.
type Figures struct {
	// SlotHours is the slot time used and Cost what it was charged: the
	// slot-hours at the pool's price (the quota's for a fixed pool).
	SlotHours float64 `json:"slot_hours"`
	Cost      float64 `json:"cost"`
	// LostSlotHours is the part of SlotHours whose work was thrown away
	// when an attempt was stopped, and LostCost what it was charged.
	LostSlotHours float64 `json:"lost_slot_hours"`
	LostCost      float64 `json:"lost_cost"`
	// Premium is the elastic part of Cost minus what the same slot-hours
	// would have cost at the fixed price; negative when elastic was cheaper.
	Premium float64 `json:"premium"`
}

func (f *Figures) add(g Figures) {
	f.SlotHours += g.SlotHours
	f.Cost += g.Cost
	f.LostSlotHours += g.LostSlotHours
	f.LostCost += g.LostCost
	f.Premium += g.Premium
}

// Paid is what was paid for capacity, used or not, split into the part
// charged to jobs and the idle rest.
type Paid struct {
	// PaidSlotHours is the slot time paid for: the billed slot-hours of an
	// elastic pool, the quota's slot-hours of a fixed one. PaidCost is its
	// price.
	PaidSlotHours float64 `json:"paid_slot_hours"`
	PaidCost      float64 `json:"paid_cost"`
	// IdleSlotHours and IdleCost are what was paid for and not used:
	// PaidSlotHours minus the used slot-hours, PaidCost minus the charged
	// cost.
	IdleSlotHours float64 `json:"idle_slot_hours"`
	IdleCost      float64 `json:"idle_cost"`
}

func (p *Paid) add(q Paid) {
	p.PaidSlotHours += q.PaidSlotHours
	p.PaidCost += q.PaidCost
	p.IdleSlotHours += q.IdleSlotHours
	p.IdleCost += q.IdleCost
}

// settle fills in the idle figures once the paid and used ones are summed.
func (p *Paid) settle(used Figures) {
	p.IdleSlotHours = p.PaidSlotHours - used.SlotHours
	p.IdleCost = p.PaidCost - used.Cost
}

// Shares says how much of what was paid for was used.
type Shares struct {
	// UsedShare and IdleShare split the paid slot-hours; both are zero when
	// nothing was paid for.
	UsedShare float64 `json:"used_share"`
	IdleShare float64 `json:"idle_share"`
}

func shares(used, paid float64) Shares {
	if paid <= 0 {
		return Shares{}
	}
	return Shares{UsedShare: used / paid, IdleShare: (paid - used) / paid}
}

// PoolRow is what one pool cost. Figures are the attempts on the pool.
type PoolRow struct {
	Pool string          `json:"pool"`
	Kind policy.PoolKind `json:"kind"`
	Figures
	Paid
	Shares
	// WorkerHours is the elastic workers' life in the window, and
	// BilledWorkerHours what the billing made of it; both are zero for a
	// fixed pool.
	WorkerHours       float64 `json:"worker_hours"`
	BilledWorkerHours float64 `json:"billed_worker_hours"`
}

// FixedSummary is the fixed quota over the window, all quotas together.
// Figures are the attempts on fixed pools; Paid is the quota.
type FixedSummary struct {
	// Slots is the quotas' total size.
	Slots int `json:"slots"`
	// PricePerSlotHour is the quotas' cost per slot-hour, the fixed price
	// premiums are measured against; zero with no quota.
	PricePerSlotHour float64 `json:"price_per_slot_hour"`
	Figures
	Paid
	Shares
}

// JobRow is what one job was charged, all its attempts together.
type JobRow struct {
	JobID    string `json:"job"`
	Team     string `json:"team"`
	Template string `json:"template"`
	// Attempts counts the job's attempts in the window.
	Attempts int `json:"attempts"`
	Figures
}

// GroupRow is what the jobs of one team or one template were charged.
type GroupRow struct {
	Name string `json:"name"`
	Figures
}

// DayRow is one calendar day: what was charged to the attempts that ran on
// it and what was paid on it.
type DayRow struct {
	// Day is the date, as 2006-01-02, and Start its first instant in the
	// report's Location (the window may start later).
	Day   string    `json:"day"`
	Start time.Time `json:"start"`
	Figures
	Paid
}

// Totals is the whole window: what was charged to jobs and what was paid.
type Totals struct {
	Figures
	Paid
	Shares
	// FixedCost is the quotas' cost and ElasticCost the elastic workers'
	// billed cost; they add up to PaidCost.
	FixedCost   float64 `json:"fixed_cost"`
	ElasticCost float64 `json:"elastic_cost"`
}
