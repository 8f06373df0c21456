package planner

import (
	"math"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

func TestShapesSayWhichMachinesHoldEachJob(t *testing.T) {
	a10 := map[string]string{"gpu_model": "A10"}
	tr := trace.Trace{Jobs: []trace.Job{
		{Duration: time.Hour, Slots: 1, Class: jobs.ClassBurst},
		{Duration: time.Hour, Slots: 1, Class: jobs.ClassBurst},
		{Duration: time.Hour, Slots: 4, Class: jobs.ClassBurst, Checkpointable: true},
		{Duration: time.Hour, Slots: 4, Class: jobs.ClassBurst},
		{Duration: time.Hour, Slots: 8, Class: jobs.ClassCore},
		{Duration: 2 * time.Hour, Slots: 4, Replicas: 3, Class: jobs.ClassBurst, Checkpointable: true},
		{Duration: time.Hour, Slots: 1, Class: jobs.ClassCore, Requires: a10},
	}}
	pools := []policy.Pool{
		{Name: "fixed", Kind: policy.PoolFixed},
		{Name: "od", Kind: policy.PoolOnDemand, SlotsPerWorker: 1},
		{Name: "spot4", Kind: policy.PoolSpot, SlotsPerWorker: 4, MaxWorkers: 2},
	}
	sh := ShapesOf(tr, pools)
	if sh.LargestOnDemand != 1 || sh.LargestSpot != 4 {
		t.Fatalf("largest machines: on-demand %d, spot %d; want 1 and 4", sh.LargestOnDemand, sh.LargestSpot)
	}
	type want struct {
		slots, members, jobs, od, spot int
		ckpt, labelled                 bool
		hours                          float64
	}
	wants := []want{
		{4, 3, 1, 0, 0, true, true, 24}, // three machines of spot4 needed, two allowed
		{8, 1, 1, 0, 0, false, true, 8},
		{4, 1, 1, 0, 4, true, true, 4},
		{4, 1, 1, 0, 4, false, true, 4}, // spot holds it, but it may not go there
		{1, 1, 2, 1, 4, false, true, 2},
		{1, 1, 1, 0, 0, false, false, 1}, // no pool carries A10
	}
	if len(sh.All) != len(wants) {
		t.Fatalf("%d shapes, want %d: %+v", len(sh.All), len(wants), sh.All)
	}
	for i, w := range wants {
		s := sh.All[i]
		if s.Slots != w.slots || s.Members != w.members || s.Jobs != w.jobs || s.OnDemand != w.od || s.Spot != w.spot ||
			s.Checkpointable != w.ckpt || s.Labelled != w.labelled || s.SlotHours != w.hours {
			t.Errorf("shape %d: %+v, want %+v", i, s, w)
		}
	}
	// The 8-slot core job, the 3x4 gang and the 4-slot burst job that may
	// not go to spot need the quota, with overflow or without; the A10
	// job no pool carries runs nowhere, and is named apart (Unlabelled).
	if got := len(sh.QuotaOnly(true)); got != 3 {
		t.Errorf("%d quota-only shapes with overflow, want 3", got)
	}
	if got := len(sh.QuotaOnly(false)); got != 3 {
		t.Errorf("%d quota-only shapes without overflow, want 3", got)
	}
	// The gang's 12 slots set the floor; lent under a high watermark of
	// 0.7 it needs a quota of 18 (floor(0.7 x 18) = 12).
	for _, c := range []struct {
		overflow bool
		high     float64
		want     int
	}{{true, 0, 12}, {true, 0.7, 18}, {false, 0.7, 18}, {true, 1, 12}} {
		if got := sh.Floor(c.overflow, c.high); got != c.want {
			t.Errorf("Floor(overflow %t, high %.1f) = %d, want %d", c.overflow, c.high, got, c.want)
		}
	}
	if u := sh.Unlabelled(); len(u) != 1 || u[0].Requires["gpu_model"] != "A10" {
		t.Errorf("unlabelled shapes: %+v, want the one requiring A10", u)
	}
}

// quotaUnder must agree with the policy's lending ceiling, floor(high x q),
// read by brute force.
func TestQuotaUnderIsTheSmallestQuotaWhoseCeilingHoldsTheJob(t *testing.T) {
	for _, high := range []float64{0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 0.95, 1} {
		for k := 1; k <= 64; k++ {
			want := 0
			for q := 1; ; q++ {
				if int(math.Floor(high*float64(q)+1e-9)) >= k {
					want = q
					break
				}
			}
			if got := quotaUnder(k, high); got != want {
				t.Errorf("quotaUnder(%d, %.2f) = %d, want %d", k, high, got, want)
			}
		}
	}
}

func TestTheOptimumAboveAFloorIsTheCheapestQuotaThereByBruteForce(t *testing.T) {
	l := DemandLevels(gpuLikeTrace(3))
	for _, ratio := range []float64{0.3, 0.5, 0.7, 0.9} {
		pr := Prices{FixedPerSlotHour: ratio, ElasticPerSlotHour: 1}
		free := OfflineOptimum(l, pr)
		for _, machine := range []int{1, 4, 8} {
			for floor := 0; floor <= l.Peak()+2; floor++ {
				got := OfflineOptimumAbove(l, pr, floor, machine)
				best, bestQ := math.Inf(1), -1
				for q := floor; q <= max(floor, l.Peak()); q++ {
					// Demand over the quota, rented in whole machines, by
					// brute force over the levels.
					elastic := 0.0
					for k, d := range l.Time {
						for over := k - q; over > 0; over -= machine {
							elastic += float64(machine) * d.Hours()
						}
					}
					if c := float64(q)*ratio*l.Span.Hours() + elastic; c < best-1e-9 {
						best, bestQ = c, q
					}
				}
				if got.FixedSlots != bestQ || math.Abs(got.Cost-best) > 1e-6*best || got.Floor != floor || got.Machine != machine {
					t.Errorf("ratio %.1f floor %d machine %d: %d slots at %.3f, brute force %d at %.3f",
						ratio, floor, machine, got.FixedSlots, got.Cost, bestQ, best)
				}
				moved := got.FixedSlots != free.FixedSlots || math.Abs(got.Cost-free.Cost) > 1e-9
				if (got.WithoutShapes != nil) != moved {
					t.Errorf("ratio %.1f floor %d machine %d: WithoutShapes %v, but the free optimum is %d at %.3f",
						ratio, floor, machine, got.WithoutShapes, free.FixedSlots, free.Cost)
				}
			}
		}
	}
}

func TestTheElasticMachineIsTheSmallestAtTheElasticPrice(t *testing.T) {
	pools := []policy.Pool{
		{Name: "fixed", Kind: policy.PoolFixed, PricePerSlotHour: 1},
		{Name: "od8", Kind: policy.PoolOnDemand, PricePerSlotHour: 2, SlotsPerWorker: 8},
		{Name: "od4", Kind: policy.PoolOnDemand, PricePerSlotHour: 2, SlotsPerWorker: 4},
		{Name: "od1", Kind: policy.PoolOnDemand, PricePerSlotHour: 3, SlotsPerWorker: 1},
		{Name: "spot1", Kind: policy.PoolSpot, PricePerSlotHour: 0.5, SlotsPerWorker: 1},
	}
	pr, err := PricesOf(pools, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := ElasticMachine(pools, pr); got != 4 {
		t.Errorf("ElasticMachine = %d, want 4 (the smaller of the on-demand pools at 2)", got)
	}
	if got := ElasticMachine(pools[4:], Prices{FixedPerSlotHour: 0.2, ElasticPerSlotHour: 0.5}); got != 1 {
		t.Errorf("spot only: %d, want 1", got)
	}
}

// A job needing more CPUs than an elastic pool's workers declare fits
// none of them, and sets the floor; undeclared, CPUs bind nowhere.
func TestShapesHonourDeclaredCPUs(t *testing.T) {
	tr := trace.Trace{Jobs: []trace.Job{
		{Duration: time.Hour, Slots: 2, Class: jobs.ClassBurst, Checkpointable: true, CPUs: 48},
		{Duration: time.Hour, Slots: 1, Class: jobs.ClassBurst, Checkpointable: true, CPUs: 4},
	}}
	od := policy.Pool{Name: "od", Kind: policy.PoolOnDemand, SlotsPerWorker: 8, CPUs: 32}
	if f := ShapesOf(tr, []policy.Pool{od}).Floor(true, 0); f != 2 {
		t.Errorf("floor %d, want 2: the 48-CPU job fits no 32-CPU machine", f)
	}
	od.CPUs = 0
	sh := ShapesOf(tr, []policy.Pool{od})
	if f := sh.Floor(true, 0); f != 0 || len(sh.All) != 2 || sh.All[0].CPUs != 0 {
		t.Errorf("undeclared CPUs: floor %d, shapes %+v", f, sh.All)
	}
}
