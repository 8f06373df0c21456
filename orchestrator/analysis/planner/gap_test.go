package planner

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// A plan on 4-slot machines: the gap is counted from the levels by hand.
func TestGapSplitsTheCostOverTheOptimum(t *testing.T) {
	l := Levels{Time: make([]time.Duration, 11)}
	l.Time[0], l.Time[3], l.Time[10] = time.Hour, 2*time.Hour, time.Hour
	l.Span = 4 * time.Hour
	prices := Prices{FixedPerSlotHour: 1, ElasticPerSlotHour: 2}
	pools := []policy.Pool{{Name: "od", Kind: policy.PoolOnDemand, SlotsPerWorker: 4, PricePerSlotHour: 2}}
	r := sim.Result{Pools: []sim.PoolUsage{
		{Name: "fixed", Kind: policy.PoolFixed, FixedSlots: 2, SlotHours: 5},
		{Name: "od", Kind: policy.PoolOnDemand, BilledHours: 5, SlotHours: 12, PinnedSlotHours: 3, ShareRoomSlotHours: 1.5},
	}}
	g := gapOf(l, prices, 4, 2, r, pools)
	// Up to the quota: 2 slots for 2 h at level 3 and 1 h at level 10.
	// Above it: 1 slot rents a 4-slot machine for 2 h, 8 slots two
	// machines for 1 h. The plan billed 5 machine-hours of 4 slots.
	want := Gap{FixedSlots: 2, AtQuota: 2*4 + 2*16, ElasticBilled: 20, ElasticWork: 12, OptimumElastic: 16,
		ElasticPinned: 3, ElasticShareRoom: 1.5, FixedWork: 5, OptimumFixed: 6}
	if g != want {
		t.Fatalf("gap %+v, want %+v", g, want)
	}
	line := g.line(Optimum{Cost: 36}, 50)
	for _, s := range []string{"quota 2", "would cost 40.00 (1.111x its best)", "the plan 50.00 (1.389x)",
		"billed 20 slot-hours for 12 of work (60% full) where the optimum rents 16",
		"3 of the billed slot-hours were free slots on machines kept up by a running job that cannot checkpoint",
		"2 were left unused on GPUs that jobs shared",
		"ran 5 slot-hours of the 6"} {
		if !strings.Contains(line, s) {
			t.Errorf("line %q lacks %q", line, s)
		}
	}
	if l := g.line(Optimum{Cost: 60}, 50); l != "" {
		t.Errorf("a plan under the optimum got a gap line: %q", l)
	}
}

// On a real trace the gap agrees with the plan: the optimum at the picked
// quota is the closed form there, and the plan's elastic work is what its
// elastic pools ran.
func TestMakeReportsTheGapOfItsPick(t *testing.T) {
	tr := baseAndPeaks()
	so := planSim()
	so.Pools[0].SlotsPerWorker = 4
	p, err := Make(tr, Options{Sim: so, TuneDays: -1, Sweep: SweepOptions{Watermarks: []Watermarks{{0.7, 0.4}, {0.9, 0.6}}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Gap == nil {
		t.Fatal("no gap")
	}
	f, e := DemandLevels(tr).CostIn(p.Best.FixedSlots, p.Prices, p.Optimum.Machine)
	if math.Abs(p.Gap.AtQuota-(f+e)) > 1e-6 || p.Gap.FixedSlots != p.Best.FixedSlots {
		t.Errorf("gap at quota %d: %.2f, want the closed form %.2f at %d", p.Gap.FixedSlots, p.Gap.AtQuota, f+e, p.Best.FixedSlots)
	}
	if p.Gap.AtQuota < p.Optimum.Cost-1e-6 {
		t.Errorf("the optimum at the pick's quota %.2f is under the optimum %.2f", p.Gap.AtQuota, p.Optimum.Cost)
	}
	if p.Gap.ElasticBilled < p.Gap.ElasticWork-1e-6 || p.Gap.ElasticWork <= 0 {
		t.Errorf("elastic billed %.3f slot-hours for %.3f of work", p.Gap.ElasticBilled, p.Gap.ElasticWork)
	}
	if got := p.Best.Result.SlotHours.OnDemand + p.Best.Result.SlotHours.Spot; math.Abs(got-p.Gap.ElasticWork) > 1e-6 {
		t.Errorf("elastic work %.3f, want the simulation's %.3f", p.Gap.ElasticWork, got)
	}
}
