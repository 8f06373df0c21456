package planner

import (
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// pinnedShare is how much of the billed elastic slot-hours free slots
// pinned by work that cannot checkpoint must be before adviseSmallMachines
// looks for a cure: below it the machines' size costs too little to
// matter beside the simulations the advice takes.
const pinnedShare = 0.10

// adviseSmallMachines suggests on-demand machines of one slot when every
// on-demand pool rents bigger ones, most of the work is one-slot jobs,
// and the plan's machines were billed for many free slots that a running
// job which cannot checkpoint kept up (Gap.ElasticPinned). Such a job
// holds its whole machine until it ends, however little of it the other
// jobs still use; on a machine of its own size it holds nothing else. The
// pool suggested copies the cheapest on-demand pool at one slot per
// machine, so the policy gives it one-slot work first (ComparePools), and
// the plan is searched again with it. The advice is given only when that
// plan is cheaper: not every provider rents machines that small, so a
// suggestion that saves nothing is noise. Nil when it does not apply.
func (p *Plan) adviseSmallMachines(tr trace.Trace, o Options, sw SweepOptions, clock *runClock) (*ShapeAdvice, error) {
	g := p.Gap
	if g == nil || g.ElasticBilled <= 0 || g.ElasticPinned < pinnedShare*g.ElasticBilled || len(p.flavorNames()) > 0 {
		return nil, nil
	}
	smallest := 0
	for _, pl := range o.Sim.Pools {
		if pl.Kind == policy.PoolOnDemand && (smallest == 0 || machineOf(pl) < smallest) {
			smallest = machineOf(pl)
		}
	}
	if smallest <= 1 {
		return nil, nil
	}
	base, ok := fixTemplate(o.Sim.Pools)
	if !ok {
		return nil, nil
	}
	var one, all float64
	n := 0
	for _, s := range p.Shapes.All {
		all += s.SlotHours
		if s.Slots == 1 && s.Members <= 1 {
			if !jobs.Carries(base.Labels, s.Requires) {
				return nil, nil // the pool copied would not run them
			}
			one += s.SlotHours
			n += s.Jobs
		}
	}
	if one < all/2 {
		return nil, nil
	}
	fix, err := p.simulateFix(tr, o, sw, clock, 1, nil)
	if err != nil || fix == nil || fix.Saving <= 0 {
		return nil, err
	}
	return &ShapeAdvice{
		Title: fmt.Sprintf("%.0f of the %.0f billed elastic slot-hours were free slots that jobs which cannot checkpoint kept up, and no on-demand machine has fewer than %d slots; %d one-slot jobs hold %.0f%% of the work",
			g.ElasticPinned, g.ElasticBilled, smallest, n, 100*one/all),
		Action: "add an on-demand pool of 1-slot machines at the same price per slot, if the provider rents them, so one-slot work takes a machine of its own size. " +
			fix.words(),
		Jobs: n, SlotHours: one, Fix: fix,
	}, nil
}
