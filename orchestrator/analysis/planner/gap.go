package planner

import (
	"fmt"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// Gap splits a plan's cost over the offline optimum in two: the quota it
// chose (the optimum's own closed form at that quota against its best
// quota) and what the closed form leaves out at that quota. The closed
// form runs every slot of demand up to the quota on it and rents the rest
// in whole machines, repacked onto the fewest machines at every instant; a
// simulated job that cannot checkpoint stays on the machine it started on
// until it ends (rule 5 repacks only checkpointable work), so elastic
// machines run part empty, and work that overflowed or waited may miss
// quota time that was free. The figures say which of these a plan's
// multiple of the optimum comes from, so a gap the search cannot close is
// shown as such instead of read as a bad pick.
type Gap struct {
	// FixedSlots is the plan's quota; AtQuota the optimum's cost there
	// (same floor rules, elastic in the optimum's machines).
	FixedSlots int     `json:"fixed_slots"`
	AtQuota    float64 `json:"optimum_at_quota"`
	// ElasticBilled is the slot-hours the plan's elastic machines were
	// billed (billed machine-hours × slots per machine), ElasticWork the
	// slot-hours of work that ran on them, and OptimumElastic the
	// slot-hours the optimum rents at the plan's quota.
	ElasticBilled  float64 `json:"elastic_billed_slot_hours"`
	ElasticWork    float64 `json:"elastic_work_slot_hours"`
	OptimumElastic float64 `json:"optimum_elastic_slot_hours"`
	// ElasticPinned is the part of the billed slot-hours that were free
	// on machines a running job that cannot checkpoint kept up
	// (sim.PoolUsage.PinnedSlotHours): no rule can empty such a machine,
	// so this part of the gap closes only with checkpointing.
	ElasticPinned float64 `json:"elastic_pinned_free_slot_hours"`
	// ElasticShareRoom is the part of the billed slot-hours left unused
	// on GPUs that jobs shared (sim.PoolUsage.ShareRoomSlotHours). The
	// optimum packs the shares running at each instant afresh; jobs
	// that cannot checkpoint keep the GPU they started on, so shares
	// that started apart stay apart.
	ElasticShareRoom float64 `json:"elastic_share_room_slot_hours,omitempty"`
	// FixedWork is the slot-hours that ran on the quota, OptimumFixed what
	// the optimum runs there (all demand up to the quota).
	FixedWork    float64 `json:"fixed_work_slot_hours"`
	OptimumFixed float64 `json:"optimum_fixed_slot_hours"`
}

// gapOf is the gap of a plan simulated as r at quota q, against the
// demand levels l, prices p and the optimum's elastic machine size.
func gapOf(l Levels, p Prices, machine, q int, r sim.Result, pools []policy.Pool) Gap {
	machine = max(machine, 1)
	g := Gap{FixedSlots: q}
	f, e := l.CostIn(q, p, machine)
	g.AtQuota = f + e
	for k, t := range l.Time {
		h := t.Hours()
		g.OptimumFixed += float64(min(k, q)) * h
		if k > q {
			g.OptimumElastic += float64((k-q+machine-1)/machine*machine) * h
		}
	}
	for _, u := range r.Pools {
		if !u.Kind.Elastic() {
			g.FixedWork += u.SlotHours
			continue
		}
		size := 1
		if i := slices.IndexFunc(pools, func(pl policy.Pool) bool { return pl.Name == u.Name }); i >= 0 {
			size = machineOf(pools[i])
		}
		g.ElasticBilled += u.BilledHours * float64(size)
		g.ElasticWork += u.SlotHours
		g.ElasticPinned += u.PinnedSlotHours
		g.ElasticShareRoom += u.ShareRoomSlotHours
	}
	return g
}

// line says where the plan's cost over the optimum comes from; empty when
// there is nothing to explain.
func (g Gap) line(o Optimum, cost float64) string {
	if o.Cost <= 0 || cost <= o.Cost {
		return ""
	}
	s := fmt.Sprintf("gap to the optimum: at the plan's quota %d the optimum would cost %.2f (%.3fx its best), the plan %.2f (%.3fx)",
		g.FixedSlots, g.AtQuota, g.AtQuota/o.Cost, cost, cost/o.Cost)
	if g.ElasticBilled > 0 {
		s += fmt.Sprintf("; elastic machines were billed %.0f slot-hours for %.0f of work (%.0f%% full) where the optimum rents %.0f, repacking the demand above the quota onto the fewest machines at every instant",
			g.ElasticBilled, g.ElasticWork, 100*g.ElasticWork/g.ElasticBilled, g.OptimumElastic)
		if g.ElasticPinned >= 0.5 {
			s += fmt.Sprintf("; %.0f of the billed slot-hours were free slots on machines kept up by a running job that cannot checkpoint, which no rule can move off its machine",
				g.ElasticPinned)
		}
		if g.ElasticShareRoom >= 0.5 {
			s += fmt.Sprintf("; %.0f were left unused on GPUs that jobs shared, which the optimum packs afresh at every instant",
				g.ElasticShareRoom)
		}
	}
	if g.OptimumFixed > 0 {
		s += fmt.Sprintf("; the quota ran %.0f slot-hours of the %.0f the optimum puts on it", g.FixedWork, g.OptimumFixed)
	}
	return s
}
