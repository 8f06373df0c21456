package trace

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/trace/tracetest"
)

func TestShareLoadGPUsLiesBetweenTheSumAndTheBestPacking(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 8))
	tighter := 0
	for range 3000 {
		var sl ShareLoad
		var shares []int
		sum := 0
		for range rng.IntN(8) {
			m := 1 + rng.IntN(jobs.GPUMilli-1)
			if rng.IntN(3) == 0 {
				m = 500 + rng.IntN(jobs.GPUMilli-500) // many over half
			}
			shares = append(shares, m)
			sum += m
			sl.Add(m, true)
		}
		got, exact, fluid := sl.GPUs(), tracetest.FewestDevices(shares), jobs.WholeGPUs(int64(sum))
		if got < fluid || got > exact {
			t.Fatalf("shares %v: bound %d, want between the sum %d and the best packing %d", shares, got, fluid, exact)
		}
		if got > fluid {
			tighter++
		}
		for _, m := range shares {
			sl.Add(m, false)
		}
		if sl != (ShareLoad{}) {
			t.Fatalf("shares %v: %+v left after every one ended", shares, sl)
		}
	}
	// The bound must bind where big shares meet, or it adds nothing.
	if tighter == 0 {
		t.Fatal("the bound never exceeded the shares' sum")
	}
}

func TestPackedBusyTimeKeepsBigSharesOnDevicesOfTheirOwn(t *testing.T) {
	// Three 0.6-GPU pods for an hour beside a 2-GPU job for the first
	// half: summed, the shares are 1.8 GPUs (2); no device holds two of
	// them, so they fill 3.
	h := time.Hour
	tr := Trace{Jobs: []Job{
		{Submit: 0, Duration: h / 2, Slots: 2, Class: jobs.ClassCore},
		{Submit: 0, Duration: h, Slots: 1, Share: 600, Class: jobs.ClassCore},
		{Submit: 0, Duration: h, Slots: 1, Share: 600, Class: jobs.ClassBurst},
		{Submit: 0, Duration: h, Slots: 1, Share: 600, Class: jobs.ClassBurst},
	}}
	want := []time.Duration{0, 0, 0, h / 2, 0, h / 2}
	if got := tr.PackedBusyTime(); !slices.Equal(got, want) {
		t.Errorf("packed levels %v, want %v", got, want)
	}
	if fluid := tr.BusyTime(); slices.Equal(fluid, want) {
		t.Errorf("BusyTime %v already packs; the test no longer shows the difference", fluid)
	}
}

func TestPackedBusyTimeNeverBelowBusyTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 30))
	for range 300 {
		var tr Trace
		for range 1 + rng.IntN(12) {
			j := Job{Submit: time.Duration(rng.IntN(20)) * time.Minute, Duration: time.Duration(1+rng.IntN(20)) * time.Minute, Slots: 1 + rng.IntN(3), Class: jobs.ClassCore}
			if rng.IntN(2) == 0 {
				j.Slots, j.Share = 1, 1+rng.IntN(jobs.GPUMilli-1)
			}
			tr.Jobs = append(tr.Jobs, j)
		}
		SortJobs(tr.Jobs)
		fluid, packed := tr.BusyTime(), tr.PackedBusyTime()
		var span [2]time.Duration
		var area [2]float64
		for i, l := range [2][]time.Duration{fluid, packed} {
			for k, d := range l {
				span[i] += d
				area[i] += float64(k) * d.Minutes()
			}
		}
		if span[0] != span[1] || area[1] < area[0] {
			t.Fatalf("jobs %+v: packed span %v area %.1f against BusyTime's %v %.1f", tr.Jobs, span[1], area[1], span[0], area[0])
		}
	}
}
