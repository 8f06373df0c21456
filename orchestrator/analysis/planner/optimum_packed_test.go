package planner

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
	"github.com/ballastdev/ballast/orchestrator/model/trace/tracetest"
)

// exactLevels is the demand histogram of a trace on a minute grid with
// the devices each minute needs by the best packing: what every plan
// that starts its jobs on time holds at the least.
func exactLevels(tr trace.Trace, minutes int) Levels {
	var l Levels
	for m := range minutes {
		at := time.Duration(m) * time.Minute
		whole, shares := 0, []int(nil)
		for _, j := range tr.Jobs {
			if j.Submit <= at && at < j.Submit+j.Duration {
				if j.Share > 0 {
					shares = append(shares, j.Share)
				} else {
					whole += j.TotalSlots()
				}
			}
		}
		k := whole + tracetest.FewestDevices(shares)
		for len(l.Time) <= k {
			l.Time = append(l.Time, 0)
		}
		l.Time[k] += time.Minute
		l.Span += time.Minute
	}
	return l
}

// cheapestOn is the cheapest quota of at least floor priced on l with
// elastic capacity in machines of machine slots, by trying every quota.
func cheapestOn(l Levels, p Prices, floor, machine int) float64 {
	best := math.Inf(1)
	for q := floor; q <= max(floor, l.Peak()); q++ {
		f, e := l.CostIn(q, p, machine)
		best = min(best, f+e)
	}
	return best
}

func TestOfflineOptimumStaysBelowEveryPackingOfShares(t *testing.T) {
	// Random minutes of whole-GPU jobs and shares, many over half a GPU:
	// the optimum must never pass the one priced on the best packing of
	// every minute (a bound that did would claim a cost no plan can
	// reach), and never fall under the one with shares summed.
	rng := rand.New(rand.NewPCG(30, 5))
	for c := range 200 {
		const minutes = 30
		var tr trace.Trace
		for range 1 + rng.IntN(9) {
			j := trace.Job{Submit: time.Duration(rng.IntN(minutes)) * time.Minute, Slots: 1 + rng.IntN(2), Class: jobs.ClassCore}
			j.Duration = time.Duration(1+rng.IntN(minutes-int(j.Submit.Minutes()))) * time.Minute
			if rng.IntN(3) > 0 {
				j.Slots, j.Share = 1, 100+rng.IntN(850)
			}
			tr.Jobs = append(tr.Jobs, j)
		}
		trace.SortJobs(tr.Jobs)
		p := Prices{FixedPerSlotHour: 1, ElasticPerSlotHour: 1 + rng.Float64()*3}
		exact := exactLevels(tr, minutes)
		fluid := Levels{Time: tr.BusyTime()}
		for _, d := range fluid.Time {
			fluid.Span += d
		}
		for _, machine := range []int{1, 4} {
			got := OfflineOptimumAbove(DemandLevels(tr), p, 0, machine).Cost
			if top := cheapestOn(exact, p, 0, machine); got > top+1e-9 {
				t.Fatalf("case %d, machines of %d: optimum %.4f above the best packing's %.4f; jobs %+v", c, machine, got, top, tr.Jobs)
			}
			if low := cheapestOn(fluid, p, 0, machine); got < low-1e-9 {
				t.Fatalf("case %d, machines of %d: optimum %.4f below the summed shares' %.4f", c, machine, got, low)
			}
		}
	}
}

func TestOfflineOptimumCountsBigSharesAsDevices(t *testing.T) {
	// Three pods of 0.6 GPU all day, elastic at twice the quota's price:
	// no device holds two, so the optimum buys three slots (1.8 summed
	// would buy two and rent nothing, a plan no worker can run).
	tr := trace.Trace{Jobs: []trace.Job{
		{Submit: 0, Duration: 24 * time.Hour, Slots: 1, Share: 600, Class: jobs.ClassCore},
		{Submit: 0, Duration: 24 * time.Hour, Slots: 1, Share: 600, Class: jobs.ClassCore},
		{Submit: 0, Duration: 24 * time.Hour, Slots: 1, Share: 600, Class: jobs.ClassCore},
	}}
	opt := OfflineOptimum(DemandLevels(tr), Prices{FixedPerSlotHour: 1, ElasticPerSlotHour: 2})
	if opt.FixedSlots != 3 || math.Abs(opt.Cost-72) > 1e-9 {
		t.Errorf("optimum %d slots at %.2f, want 3 at 72.00", opt.FixedSlots, opt.Cost)
	}
}
