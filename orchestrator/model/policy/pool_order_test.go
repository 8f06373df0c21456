package policy

import (
	"fmt"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// At one price per slot-hour, work goes to the pool of smaller machines
// it fits, whatever the pools are called: "big" sorts before "small" by
// name, which used to decide. At different prices, a new machine is
// weighed by what it costs for the work there is to fill it (growCost).
func TestSmallerMachinesFirstAtOnePrice(t *testing.T) {
	burst, core := jobs.ClassBurst, jobs.ClassCore
	fxp, fxw := fixedWith(2, 2) // the quota is full: nothing is lent
	big := elasticPool("big", PoolOnDemand, "eu", 2.5)
	big.SlotsPerWorker = 8
	small := elasticPool("small", PoolOnDemand, "eu", 2.5)
	small.SlotsPerWorker = 1
	pools := append(fxp, big, small)
	plain := func(id string) Job {
		j := queued(id, burst, QueueBurst, ago(time.Minute))
		j.Checkpointable, j.Retryable = false, false
		return j
	}
	ones := func(k int) []Job {
		var js []Job
		for i := range k {
			js = append(js, plain(fmt.Sprintf("q%d", i)))
		}
		return js
	}
	wide := plain("w4")
	wide.Slots = 4
	late := queued("c1", core, QueueCore, ago(time.Hour))

	cheaperBig := append([]Pool(nil), pools...)
	cheaperBig[1].PricePerSlotHour = 2.4

	bigUp := worker("b1", "big", 8, 0)
	onBig := running("r1", burst, bigUp, ago(time.Hour))
	onBig.Checkpointable = false

	overflowCfg := func(s Snapshot) Snapshot {
		s.Config.CoreOverflow, s.Config.CoreMaxWait = true, time.Minute
		return s
	}

	runCases(t, []planCase{
		{"one-slot work launches small machines", snap(pools, fxw, ones(3)...), t0, "scale_up(small,3)"},
		{"work too wide for them launches a large one", snap(pools, fxw, wide), t0, "scale_up(big,1)"},
		// An 8-slot machine at 2.4 a slot costs 19.2 an hour; three
		// 1-slot ones at 2.5, 7.5. Eight jobs fill the large one.
		{"a few jobs rent small machines a little dearer a slot", snap(cheaperBig, fxw, ones(3)...), t0, "scale_up(small,3)"},
		{"enough jobs to fill one rent the large machine", snap(cheaperBig, fxw, ones(8)...), t0, "scale_up(big,1)"},
		{"free slots on a running large machine come before a launch",
			snap(pools, append(append([]Worker(nil), fxw...), bigUp), onBig, plain("q0")), t0, ""},
		{"overflowed core work launches a small machine", overflowCfg(snap(pools, fxw, late)), t0,
			"overflow(c1,small) scale_up(small,1)"},
	})
}

func TestComparePools(t *testing.T) {
	p := func(name string, price float64, slots int) *Pool {
		return &Pool{Name: name, PricePerSlotHour: price, SlotsPerWorker: slots}
	}
	cases := []struct {
		a, b *Pool
		want int
	}{
		{p("a", 1, 8), p("b", 2, 1), -1}, // price first
		{p("a", 2, 8), p("b", 2, 1), 1},  // then the smaller machine
		{p("a", 2, 4), p("b", 2, 4), -1}, // then the name
		{p("a", 2, 4), p("a", 2, 4), 0},
	}
	for _, c := range cases {
		if got := ComparePools(c.a, c.b); got != c.want {
			t.Errorf("ComparePools(%s %.0f %d, %s %.0f %d) = %d, want %d",
				c.a.Name, c.a.PricePerSlotHour, c.a.SlotsPerWorker, c.b.Name, c.b.PricePerSlotHour, c.b.SlotsPerWorker, got, c.want)
		}
	}
}
