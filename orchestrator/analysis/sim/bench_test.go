package sim

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// benchTrace is n jobs over days days: Poisson arrivals whose rate follows
// a daily cycle (half again at the afternoon peak, half at night, by
// thinning), exponential durations of mean meanDur, 40% core, burst jobs
// 70% checkpointable, one slot in ten jobs asking for two to four.
func benchTrace(n int, days int, meanDur time.Duration, seed uint64) trace.Trace {
	r := rand.New(rand.NewPCG(seed, 1))
	span := float64(time.Duration(days) * day)
	mean := float64(n) / span // arrivals per nanosecond, on average
	peak := 1.5 * mean
	tr := trace.Trace{Name: "bench", Start: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), Jobs: make([]trace.Job, 0, n)}
	templates := []string{"etl", "train", "eval", "report", "sweep"}
	var t float64
	for len(tr.Jobs) < n {
		t += r.ExpFloat64() / peak
		rate := mean * (1 + 0.5*math.Sin(2*math.Pi*t/float64(day)))
		if r.Float64()*peak > rate {
			continue
		}
		j := trace.Job{
			Submit:   time.Duration(t),
			Duration: max(time.Duration(r.ExpFloat64()*float64(meanDur)), time.Second),
			Slots:    1,
			Class:    jobs.ClassBurst,
			Template: templates[r.IntN(len(templates))],
			Team:     "team",
		}
		if r.Float64() < 0.1 {
			j.Slots = 2 + r.IntN(3)
		}
		if r.Float64() < 0.4 {
			j.Class = jobs.ClassCore
		} else {
			j.Checkpointable = r.Float64() < 0.7
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

// benchOptions is a hybrid installation sized for benchTrace's load with
// five-minute jobs: quota for about the mean, elastic pools for the peaks.
func benchOptions() Options {
	return Options{
		Config:     policy.DefaultConfig(),
		FixedSlots: 100,
		Pools: []policy.Pool{
			{Name: "quota", Kind: policy.PoolFixed, PricePerSlotHour: 0.4},
			{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 1.0, Billing: policy.BillingPerSecond,
				MinBilling: time.Minute, StartupDelay: 2 * time.Minute, MaxWorkers: 40, SlotsPerWorker: 8, IdleTTL: 10 * time.Minute},
			{Name: "spot", Kind: policy.PoolSpot, PricePerSlotHour: 0.35, Billing: policy.BillingPerSecond,
				MinBilling: time.Minute, StartupDelay: 3 * time.Minute, MaxWorkers: 40, SlotsPerWorker: 8, IdleTTL: 10 * time.Minute},
		},
		SpotReclaimRate:    0.05,
		CheckpointInterval: 10 * time.Minute,
		CheckpointOverhead: 30 * time.Second,
		Seed:               1,
	}
}

// peakHeap samples the heap while a run goes on: ReadMemStats only tells
// the present, and the peak is what the 1 GB limit is about.
func peakHeap() (stop func() uint64) {
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		mu.Lock()
		peak = max(peak, m.HeapAlloc)
		mu.Unlock()
	}
	wg.Go(func() {
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				sample()
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		sample()
		return peak
	}
}

// BenchmarkRun simulates a million jobs over 30 days. The trace is built
// outside the timer; its own memory counts in the peak, as it would for a
// caller.
func BenchmarkRun(b *testing.B) {
	tr := benchTrace(1_000_000, 30, 5*time.Minute, 7)
	o := benchOptions()
	runtime.GC()
	stop := peakHeap()
	b.ResetTimer()
	var r Result
	for b.Loop() {
		var err error
		if r, err = Run(tr, o); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	peak := stop()
	b.ReportMetric(float64(len(tr.Jobs))*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(r.Decisions), "decisions")
	b.Logf("%d jobs, %.1f days, cost %.0f (fixed %.0f, od %.0f, spot %.0f), idle %.2f, core p95 %v, burst p95 %v, peak elastic %d, preemptions %+v, decisions %d",
		r.Jobs, r.SimulatedSeconds/86400, r.Cost.Total, r.Cost.Fixed, r.Cost.OnDemand, r.Cost.Spot, r.FixedIdleShare,
		r.CoreWait.P95, r.ElasticWait.P95, r.PeakElasticWorkers, r.Preemptions, r.Decisions)
}

// BenchmarkRunSyntheticMonth simulates the default synthetic month of a
// million jobs (trace.DefaultSynthetic, as `ballast trace --synthetic` and
// `ballast simulate --synthetic` generate it), which peaks near 14,000 busy
// slots: thousands of jobs in flight on every tick.
func BenchmarkRunSyntheticMonth(b *testing.B) {
	tr, err := trace.Generate(trace.DefaultSynthetic(1_000_000, 1))
	if err != nil {
		b.Fatal(err)
	}
	o := monthOptions(4000, true)
	o.Pools[0].MaxWorkers, o.Pools[1].MaxWorkers = 20_000, 5_000
	benchRun(b, tr, o)
}

// BenchmarkRunInFlight simulates 100,000 jobs over two days with a mean
// duration of 150 minutes: about 5,000 slots busy at once.
func BenchmarkRunInFlight(b *testing.B) {
	tr := benchTrace(100_000, 2, 150*time.Minute, 7)
	o := benchOptions()
	o.FixedSlots = 4000
	o.Pools[1].MaxWorkers, o.Pools[2].MaxWorkers = 400, 400
	benchRun(b, tr, o)
}

// benchRun runs tr under o, reporting jobs per second, the peak heap, the
// decisions and the mean jobs in flight.
func benchRun(b *testing.B, tr trace.Trace, o Options) {
	b.Helper()
	var work time.Duration
	for _, j := range tr.Jobs {
		work += j.Duration * time.Duration(j.Slots)
	}
	runtime.GC()
	stop := peakHeap()
	b.ResetTimer()
	var r Result
	for b.Loop() {
		var err error
		if r, err = Run(tr, o); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	peak := stop()
	b.ReportMetric(float64(len(tr.Jobs))*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(r.Decisions), "decisions")
	b.ReportMetric(float64(work)/float64(tr.Span()), "mean-slots-busy")
	b.Logf("%s: %d jobs, %.1f days, peak demand %d slots, cost %.0f, core p95 %v, burst p95 %v, peak elastic %d, preemptions %+v, actions %v",
		tr.Name, r.Jobs, r.SimulatedSeconds/86400, PeakDemand(tr), r.Cost.Total, r.CoreWait.P95, r.ElasticWait.P95,
		r.PeakElasticWorkers, r.Preemptions, r.Actions)
}
