package planner

import (
	"os"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// benchPrices is the setting of the cost-truth measurements: fixed 1.0 and
// on-demand 2.5 per slot-hour, no spot, on-demand workers of one slot that
// boot in two minutes, billed per second with a minute's minimum.
func benchPrices(elastic float64) sim.Options {
	return sim.Options{FixedPricePerSlotHour: 1, Seed: 1, CheckpointInterval: 10 * time.Minute, CheckpointOverhead: 30 * time.Second,
		Pools: []policy.Pool{{Name: "ondemand", Kind: policy.PoolOnDemand, PricePerSlotHour: elastic, Billing: policy.BillingPerSecond,
			MinBilling: time.Minute, StartupDelay: 2 * time.Minute, IdleTTL: 5 * time.Minute, MaxWorkers: 5000, SlotsPerWorker: 1}}}
}

func benchPlan(b *testing.B, tr trace.Trace, elastic float64) {
	b.Helper()
	b.ReportAllocs()
	var p Plan
	for b.Loop() {
		var err error
		if p, err = Make(tr, Options{Sim: benchPrices(elastic)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(p.Simulations), "sims/op")
	b.ReportMetric(p.Recommended.OfOptimum, "x-optimum")
	b.ReportMetric(p.Recommended.Cost, "cost")
	b.Logf("%s at %.2f: %s", tr.Name, elastic, p.VerdictLine())
}

// BenchmarkPlanSyntheticMonth plans the default synthetic month of 20,000
// jobs at a fixed/elastic price ratio of 0.4.
func BenchmarkPlanSyntheticMonth(b *testing.B) {
	tr, err := trace.Generate(trace.DefaultSynthetic(20000, 1))
	if err != nil {
		b.Fatal(err)
	}
	benchPlan(b, tr, 2.5)
}

// BenchmarkPlanAlibabaGPU plans the public Alibaba GPU cluster trace 2023
// pod list named by BALLAST_ALIBABA_TRACE (openb_pod_list_default.csv; it
// is not shipped here), at price ratios 0.4 and 0.7.
func BenchmarkPlanAlibabaGPU(b *testing.B) {
	path := os.Getenv("BALLAST_ALIBABA_TRACE")
	if path == "" {
		b.Skip("set BALLAST_ALIBABA_TRACE to an openb_pod_list CSV to plan it")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	tr, _, err := trace.ReadAlibabaGPU2023(f, trace.AlibabaGPUOptions{})
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		elastic float64
	}{{"ratio-0.4", 2.5}, {"ratio-0.7", 1 / 0.7}} {
		b.Run(tc.name, func(b *testing.B) { benchPlan(b, tr, tc.elastic) })
	}
}
