package policy

import "time"

// FixedLoad is how the fixed quota is used: the numbers every watermark
// rule starts from.
type FixedLoad struct {
	// Slots is the capacity of fixed workers that are up. Draining or
	// starting fixed workers take no work, so they are not capacity.
	Slots int
	// Busy is how many of those slots run a job, plus those held for
	// placed jobs waiting to start (rule 8), which may pass Slots while a
	// reservation waits.
	Busy int
	// QueuedCore counts core jobs waiting for a fixed slot, including ones
	// being migrated back to it.
	QueuedCore int
	// Loans counts burst jobs waiting in loan, including lends and
	// migrations in flight and excluding unlends in flight.
	Loans int
}

// Free is the number of idle fixed slots.
func (l FixedLoad) Free() int { return l.Slots - l.Busy }

// Utilization is busy fixed slots over fixed slots. With no fixed slots it
// is 1: no capacity is as good as none free, and reporting 0 would make
// rule 4 drain elastic workers towards quota that does not exist.
func (l FixedLoad) Utilization() float64 {
	if l.Slots <= 0 {
		return 1
	}
	return float64(l.Busy) / float64(l.Slots)
}

// Committed is utilization counting everything already queued for fixed
// slots (core and loans). The watermark rules use it: queued work takes its
// slot within a second, so ignoring it would lend or migrate into slots
// that are already spoken for.
func (l FixedLoad) Committed() float64 {
	if l.Slots <= 0 {
		return 1
	}
	return float64(l.Busy+l.QueuedCore+l.Loans) / float64(l.Slots)
}

// Load measures the fixed quota in s.
func Load(s Snapshot) FixedLoad { return newView(IndexOf(s), time.Time{}).fixed }

// Utilization is fixed busy slots over fixed slots (see FixedLoad.Utilization).
func Utilization(s Snapshot) float64 { return Load(s).Utilization() }
