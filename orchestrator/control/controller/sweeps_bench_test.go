package controller_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// BenchmarkSweepFanOut measures SubmitSweep for sweeps of 200 to 10,000 trials with
// no max-parallel limit: validation and expansion, the sweep record with
// every trial's spec, and one enqueued job per trial, against the real
// Redis. It reports trials enqueued per second and the time from submit to
// all trials queued.
func BenchmarkSweepFanOut(b *testing.B) {
	for _, trials := range []int{200, 1000, 10000} {
		b.Run(fmt.Sprintf("trials=%d", trials), func(b *testing.B) { benchFanOut(b, trials) })
	}
}

func benchFanOut(b *testing.B, trials int) {
	r := newFlowRigTB(b)
	sw, err := controller.NewSweeps(controller.SweepsOptions{Sweeps: r.flows, Jobs: r.store, Submitter: r.sub, Catalog: r.cat, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	spec := listSpec(trials, 0)
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		rc, err := sw.SubmitSweep(r.ctx, spec)
		total += time.Since(start)
		if err != nil || rc.Queued != trials {
			b.Fatalf("receipt %+v, err %v", rc, err)
		}
	}
	b.StopTimer()
	per := total / time.Duration(b.N)
	b.ReportMetric(float64(trials)/per.Seconds(), "trials/s")
	b.ReportMetric(float64(per.Milliseconds()), "ms/sweep")
}

// BenchmarkSweepsTick measures one leader tick over a 2,000-trial sweep
// whose trials have all ended but ten: after the first tick only the live
// trials' jobs are read.
func BenchmarkSweepsTick(b *testing.B) {
	r := newFlowRigTB(b)
	sw, err := controller.NewSweeps(controller.SweepsOptions{Sweeps: r.flows, Jobs: r.store, Submitter: r.sub, Catalog: r.cat, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	rc, err := sw.SubmitSweep(r.ctx, listSpec(2000, 0))
	if err != nil {
		b.Fatal(err)
	}
	v, err := controller.LoadSweepView(r.ctx, r.flows, r.store, rc.SweepID)
	if err != nil {
		b.Fatal(err)
	}
	for i := 10; i < 2000; i++ {
		r.finish(v.Sweep.Trials[i], jobs.StateSucceeded)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := sw.Tick(r.ctx, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
