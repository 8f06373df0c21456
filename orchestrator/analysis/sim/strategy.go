package sim

import (
	"maps"
	"runtime"
	"slices"
	"sync"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// AllFixed returns o turned into quota only: FixedSlots is the trace's peak
// demand (the most slots in use at once if every job started at
// submission), the elastic pools are gone, and the high watermark is 1 so
// burst work may borrow the whole quota. Burst jobs still reach it through
// lending, so they wait up to a tick; core jobs start on submission
// whenever the peak is not exceeded (jobs sharing GPUs count at their
// sum rounded up, a bound their packing may not reach). With a quota per flavor
// (FixedSlotsByPool), each fixed pool gets the peak demand of the jobs its
// labels can run, so that no flavor's jobs wait for another's.
func AllFixed(tr trace.Trace, o Options) Options {
	o.Pools = slices.DeleteFunc(slices.Clone(o.Pools), func(p policy.Pool) bool { return p.Kind.Elastic() })
	if len(o.FixedSlotsByPool) > 0 {
		o.FixedSlotsByPool = peakByPool(tr, o)
		o.FixedSlots = 0
	} else {
		o.FixedSlots = PeakDemand(tr)
	}
	o.Config = configOf(o)
	o.Config.High = 1
	return o
}

// AllElastic returns o without quota: every job runs elastic. Core jobs
// may not run on spot, so they go to on-demand through rule 7 without
// waiting (CoreOverflow on, CoreMaxWait 0); without an on-demand pool they
// cannot run at all and are reported unfinished.
func AllElastic(o Options) Options {
	o.Pools = slices.DeleteFunc(slices.Clone(o.Pools), func(p policy.Pool) bool { return p.Kind == policy.PoolFixed })
	o.FixedSlots, o.FixedSlotsByPool = 0, nil
	o.Config = configOf(o)
	o.Config.CoreOverflow = true
	o.Config.CoreMaxWait = 0
	return o
}

// Hybrid returns o with the given watermarks: quota and elastic pools as
// they are, burst work lent up to high and moved back below low.
func Hybrid(o Options, high, low float64) Options {
	o.Pools = slices.Clone(o.Pools)
	o.Config = configOf(o)
	o.Config.High, o.Config.Low = high, low
	return o
}

// configOf is o's Config with the zero value read as the default, so a
// strategy that changes one field does not turn the others to zero.
func configOf(o Options) policy.Config {
	if o.Config.IsZero() {
		return policy.DefaultConfig()
	}
	return o.Config
}

// peakByPool gives each pool of o.FixedSlotsByPool the peak demand of
// the jobs of tr whose labels it carries. A name that is no pool keeps
// its value, for Run to report.
func peakByPool(tr trace.Trace, o Options) map[string]int {
	out := make(map[string]int, len(o.FixedSlotsByPool))
	for name, slots := range o.FixedSlotsByPool {
		i := slices.IndexFunc(o.Pools, func(p policy.Pool) bool { return p.Name == name })
		if i < 0 {
			out[name] = slots
			continue
		}
		fit := trace.Trace{Start: tr.Start}
		for _, j := range tr.Jobs {
			if carries(o.Pools[i].Labels, j.Requires) {
				fit.Jobs = append(fit.Jobs, j)
			}
		}
		out[name] = PeakDemand(fit)
	}
	return out
}

// PeakDemand is the most slots in use at once if every job of tr started
// at its submission and ran for its Duration. A job is running on
// [Submit, Submit+Duration), so one ending as another starts is not counted
// twice.
func PeakDemand(tr trace.Trace) int {
	busy := tr.BusyTime()
	for k := len(busy) - 1; k > 0; k-- {
		if busy[k] > 0 {
			return k
		}
	}
	return 0
}

// Named is one strategy's result in a comparison.
type Named struct {
	Name    string
	Options Options
	Result  Result
}

// Compare runs tr under each named Options, up to one run per CPU at a
// time, and returns the results sorted by name. Runs share nothing, so the
// order they finish in changes nothing. The first error by name order is
// returned with the results of the runs that succeeded.
func Compare(tr trace.Trace, named map[string]Options) ([]Named, error) {
	names := slices.Sorted(maps.Keys(named))
	out := make([]Named, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	var wg sync.WaitGroup
	for i, n := range names {
		out[i] = Named{Name: n, Options: named[n]}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i].Result, errs[i] = Run(tr, out[i].Options)
		})
	}
	wg.Wait()
	var ok []Named
	var first error
	for i := range out {
		if errs[i] != nil {
			if first == nil {
				first = errs[i]
			}
			continue
		}
		ok = append(ok, out[i])
	}
	return ok, first
}
