package planner

import (
	"cmp"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// elasticOnly is the least that the jobs no fixed flavor carries cost: a
// fleet may rent a model it buys no quota of (an on-demand pool of G3
// machines beside quota of T4 and A100), and such jobs run on those
// pools or nowhere. Each is priced on the elastic pools that carry it, as
// a flavor's peaks are (PricesOf: the cheapest on-demand price, else the
// cheapest spot), its demand rented in those pools' machines at every
// instant. Left out of the fleet's optimum, they would make it the
// optimum of fewer jobs than the plans held against it run, and a plan
// would look dearer against it than it is.
type elasticOnly struct {
	Jobs int
	// Cost is in the machines the pools rent; PerSlot with every slot
	// of demand rented alone, the optimum without shapes.
	Cost, PerSlot float64
}

// elasticOnlyOf prices the jobs of tr that no pool of fixed carries, on
// the elastic pools of pools. Jobs that no pool carries at all run
// nowhere and count for nothing here (the shape advice names them).
func elasticOnlyOf(tr trace.Trace, fixed, pools []policy.Pool, fixedPrice float64) elasticOnly {
	type group struct {
		prices  Prices
		machine int
		demand  trace.Trace
	}
	var groups []*group
	var out elasticOnly
	for _, j := range tr.Jobs {
		if slices.ContainsFunc(fixed, func(f policy.Pool) bool { return jobs.Carries(f.Labels, j.Requires) }) {
			continue
		}
		var carriers []policy.Pool
		for _, p := range pools {
			if p.Kind.Elastic() && jobs.Carries(p.Labels, j.Requires) {
				carriers = append(carriers, p)
			}
		}
		pr, err := PricesOf(carriers, fixedPrice)
		if err != nil {
			continue // no elastic pool carries it either
		}
		m := ElasticMachine(carriers, pr)
		i := slices.IndexFunc(groups, func(g *group) bool { return g.prices == pr && g.machine == m })
		if i < 0 {
			groups = append(groups, &group{prices: pr, machine: m, demand: trace.Trace{Start: tr.Start}})
			i = len(groups) - 1
		}
		groups[i].demand.Jobs = append(groups[i].demand.Jobs, j)
		out.Jobs++
	}
	// Summed in one order, whatever the order the groups were met in.
	slices.SortFunc(groups, func(a, b *group) int {
		return cmp.Or(cmp.Compare(a.prices.ElasticPerSlotHour, b.prices.ElasticPerSlotHour), cmp.Compare(a.machine, b.machine))
	})
	for _, g := range groups {
		l := DemandLevels(g.demand)
		_, e := l.CostIn(0, g.prices, g.machine)
		_, s := l.CostIn(0, g.prices, 1)
		out.Cost += e
		out.PerSlot += s
	}
	return out
}

// addTo counts the elastic-only jobs in the fleet's optimum o.
func (x elasticOnly) addTo(o *Optimum) {
	if x.Jobs == 0 {
		return
	}
	o.Elastic += x.Cost
	o.Cost += x.Cost
	o.ElasticOnly = x.Cost
	if w := o.WithoutShapes; w != nil {
		w.Elastic += x.PerSlot
		w.Cost += x.PerSlot
	} else if x.PerSlot != x.Cost {
		free := *o
		free.Elastic += x.PerSlot - x.Cost
		free.Cost += x.PerSlot - x.Cost
		free.ElasticOnly = x.PerSlot
		o.WithoutShapes = &free
	}
}
