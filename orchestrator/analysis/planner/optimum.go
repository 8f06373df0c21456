package planner

import (
	"math"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Levels is a trace's exact demand as a histogram: Time[k] is how long
// exactly k slots were busy if every job started at its submission and ran
// for its Duration. Unlike Curve it is not sampled: a job of seconds counts
// for its seconds. Shares of a GPU count as the devices they fill at the
// least (trace.PackedBusyTime).
type Levels struct {
	Time []time.Duration `json:"-"`
	// Span is the trace's span (the sum of Time).
	Span time.Duration `json:"span"`
}

// DemandLevels is tr's exact demand histogram. Shares count as packed
// onto whole devices (trace.PackedBusyTime), not summed as if a share
// could spread over two GPUs: no worker splits one, so the optimum priced
// on these levels is still below every plan that starts jobs on time,
// and closer to them.
func DemandLevels(tr trace.Trace) Levels {
	l := Levels{Time: tr.PackedBusyTime()}
	for _, d := range l.Time {
		l.Span += d
	}
	return l
}

// Peak is the highest level demand reaches.
func (l Levels) Peak() int {
	for k := len(l.Time) - 1; k > 0; k-- {
		if l.Time[k] > 0 {
			return k
		}
	}
	return 0
}

// Optimum is the offline optimum: the cheapest static quota if elastic
// capacity were there the instant demand passed the quota, billed to the
// second with no start-up delay, no minimum and no idle time, at the
// elastic price of Prices (on-demand when there is an on-demand pool). No
// plan on such capacity that has to wait for workers to boot can beat it,
// so a plan's cost over it is the headroom left; a plan that runs on
// cheaper spot capacity can come in under it.
type Optimum struct {
	FixedSlots int     `json:"fixed_slots"`
	Fixed      float64 `json:"fixed_cost"`
	Elastic    float64 `json:"elastic_cost"`
	Cost       float64 `json:"cost"`
	// Floor is the least quota searched: the biggest job that no elastic
	// machine can hold needs that many slots on the quota (Shapes.Floor),
	// so no plan below it runs every job. Zero when every job fits some
	// elastic machine.
	Floor int `json:"floor,omitempty"`
	// Machine is the elastic machine size the demand above the quota is
	// rented in: the smallest machine of the pools at the elastic price.
	// Elastic capacity comes in whole machines, so demand of 3 slots on
	// 8-slot machines pays for 8. One means per slot.
	Machine int `json:"machine_slots,omitempty"`
	// WithoutShapes is the optimum with job and machine shapes ignored
	// (every slot of demand free to go anywhere, elastic rented per
	// slot), when the shapes change it: the gap between the two is what
	// the fleet's machine sizes cost.
	WithoutShapes *Optimum `json:"without_shapes,omitempty"`
	// ElasticOnly is the part of Elastic that jobs no fixed pool can run
	// cost, in a fleet of flavors that rents models it buys no quota of
	// (elasticOnly); zero otherwise.
	ElasticOnly float64 `json:"elastic_only_cost,omitempty"`
}

// CostAt prices quota q against the levels: q fixed slots over the span,
// and the demand above q at the elastic price.
func (l Levels) CostAt(q int, p Prices) (fixed, elastic float64) {
	return l.CostIn(q, p, 1)
}

// CostIn is CostAt with the demand above q rented in whole machines of
// machine slots.
func (l Levels) CostIn(q int, p Prices, machine int) (fixed, elastic float64) {
	machine = max(machine, 1)
	fixed = float64(q) * p.FixedPerSlotHour * l.Span.Hours()
	for k := q + 1; k < len(l.Time); k++ {
		if l.Time[k] == 0 {
			continue
		}
		rented := (k - q + machine - 1) / machine * machine
		elastic += float64(rented) * p.ElasticPerSlotHour * l.Time[k].Hours()
	}
	return fixed, elastic
}

// OfflineOptimumAbove is the offline optimum among quotas of at least
// floor, with elastic capacity in machines of machine slots, beside the
// optimum with shapes ignored when they move it.
func OfflineOptimumAbove(l Levels, p Prices, floor, machine int) Optimum {
	free := OfflineOptimum(l, p)
	floor, machine = max(floor, 0), max(machine, 1)
	if floor <= free.FixedSlots && machine == 1 {
		free.Floor, free.Machine = floor, machine
		return free
	}
	best := Optimum{Floor: floor, Machine: machine, Cost: math.Inf(1)}
	// Whole machines make the cost curve lumpy, no longer convex in the
	// quota: every quota from the floor up is priced, the smaller on a tie.
	for q := floor; q <= max(floor, l.Peak()); q++ {
		f, e := l.CostIn(q, p, machine)
		if f+e < best.Cost-1e-9 {
			best.FixedSlots, best.Fixed, best.Elastic, best.Cost = q, f, e, f+e
		}
	}
	if best.FixedSlots != free.FixedSlots || math.Abs(best.Cost-free.Cost) > 1e-9 {
		best.WithoutShapes = &free
	}
	return best
}

// OfflineOptimum searches every quota from 0 to the peak (a newsvendor
// problem: the q-th slot costs the fixed price all the time and saves the
// elastic price while demand is at least q) and returns the cheapest, the
// smaller quota on a tie. It is O(peak) after one pass over the levels.
func OfflineOptimum(l Levels, p Prices) Optimum {
	peak := l.Peak()
	best := Optimum{}
	best.Fixed, best.Elastic = l.CostAt(0, p)
	best.Cost = best.Fixed + best.Elastic
	fixed, elastic := best.Fixed, best.Elastic
	above := l.Span // time demand > q, for q = 0 first
	if len(l.Time) > 0 {
		above -= l.Time[0]
	}
	// Moving from q to q+1 adds a fixed slot over the span and saves the
	// elastic price for the time demand exceeds q.
	for q := 0; q < peak; q++ {
		fixed += p.FixedPerSlotHour * l.Span.Hours()
		elastic -= p.ElasticPerSlotHour * above.Hours()
		if q+1 < len(l.Time) {
			above -= l.Time[q+1]
		}
		if c := fixed + elastic; c < best.Cost-1e-9 {
			best = Optimum{FixedSlots: q + 1, Fixed: fixed, Elastic: max(elastic, 0), Cost: c}
		}
	}
	return best
}
