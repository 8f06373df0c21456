package sim

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// updateGolden rewrites the golden results instead of comparing with them.
// Only do that for a change meant to alter what the simulator measures, and
// say why in the commit.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden/*.json from the current simulator")

// goldenCase is one run whose whole Result is kept in testdata/golden.
type goldenCase struct {
	name string
	tr   func(t *testing.T) trace.Trace
	o    Options
}

// slowUnderRace are the cases of seconds without the race detector
// (thousands of sized jobs waiting for workers too small or too few, which
// rule 8 walks every tick) and minutes with it. They are skipped under
// -race; .ci/run runs them without.
var slowUnderRace = map[string]bool{
	"synthetic-5000-seed-1-all-elastic":           true,
	"synthetic-8000-seed-4-dev-pools":             true,
	"synthetic-8000-seed-4-dev-pools-all-elastic": true,
}

func syntheticTrace(n int, seed uint64) func(t *testing.T) trace.Trace {
	return func(t *testing.T) trace.Trace {
		tr, err := trace.Generate(trace.DefaultSynthetic(n, seed))
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
}

func fixtureTrace(file string, read func(*os.File) (trace.Trace, error)) func(t *testing.T) trace.Trace {
	return func(t *testing.T) trace.Trace {
		f, err := os.Open(filepath.Join("..", "..", "model", "trace", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tr, err := read(f)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
}

func benchTraceOf(n, days int, meanDur time.Duration, seed uint64) func(t *testing.T) trace.Trace {
	return func(*testing.T) trace.Trace { return benchTrace(n, days, meanDur, seed) }
}

// monthOptions is a quota of fixed slots with on-demand and spot pools of
// one slot per worker, as a GPU installation has, and overflow on: the
// setting of the synthetic month.
func monthOptions(fixed int, overflow bool) Options {
	o := Options{
		Config: policy.DefaultConfig(), FixedSlots: fixed, FixedPricePerSlotHour: 1, Seed: 3,
		CheckpointInterval: 10 * time.Minute, CheckpointOverhead: 30 * time.Second, SpotReclaimRate: 0.2,
		Pools: []policy.Pool{
			{Name: "ondemand", Kind: policy.PoolOnDemand, PricePerSlotHour: 2.5, Billing: policy.BillingPerSecond,
				MinBilling: time.Minute, StartupDelay: 2 * time.Minute, IdleTTL: 5 * time.Minute, MaxWorkers: 5000, SlotsPerWorker: 1},
			{Name: "spot", Kind: policy.PoolSpot, PricePerSlotHour: 1.2, Billing: policy.BillingPerMinute,
				MinBilling: 10 * time.Minute, StartupDelay: 3 * time.Minute, IdleTTL: 5 * time.Minute, MaxWorkers: 2000, SlotsPerWorker: 2},
		},
	}
	o.Config.CoreOverflow, o.Config.CoreMaxWait = overflow, 20*time.Minute
	return o
}

// devOptions are the pools of `ballast dev` (4 fixed slots, 4 on-demand
// and 4 spot workers of one slot): far too small for a month, so the
// backlog holds most of the trace, the case where rules walk long queues.
func devOptions() Options {
	o := monthOptions(4, false)
	o.Pools[0].StartupDelay, o.Pools[0].IdleTTL, o.Pools[0].MaxWorkers = 2*time.Second, 15*time.Second, 4
	o.Pools[1].StartupDelay, o.Pools[1].IdleTTL, o.Pools[1].MaxWorkers, o.Pools[1].SlotsPerWorker = 3*time.Second, 15*time.Second, 4, 1
	o.Pools[1].Billing, o.Pools[1].MinBilling = policy.BillingPerSecond, 0
	return o
}

func goldenCases() []goldenCase {
	light := benchOptions()
	light.FixedSlots = 15
	overflow := busyOptions()
	overflow.FixedSlots = 10
	deep := benchOptions()
	deep.FixedSlots = 150
	deep.Pools[1].MaxWorkers, deep.Pools[2].MaxWorkers = 60, 40
	month := monthOptions(60, true)
	return []goldenCase{
		{"bench-light", benchTraceOf(12_000, 2, 5*time.Minute, 11), light},
		{"bench-busy", benchTraceOf(12_000, 2, 5*time.Minute, 11), busyOptions()},
		{"bench-overflow", benchTraceOf(12_000, 2, 5*time.Minute, 11), overflow},
		// Hours-long jobs: hundreds in flight and a backlog, the snapshots
		// the incremental indexes are about.
		{"bench-deep", benchTraceOf(6_000, 1, 2*time.Hour, 5), deep},
		{"synthetic-5000-seed-1", syntheticTrace(5000, 1), month},
		{"synthetic-5000-seed-2", syntheticTrace(5000, 2), monthOptions(40, false)},
		{"synthetic-20000-seed-3", syntheticTrace(20000, 3), monthOptions(120, true)},
		{"synthetic-5000-seed-1-all-elastic", syntheticTrace(5000, 1), AllElastic(month)},
		{"synthetic-5000-seed-1-hybrid-90-20", syntheticTrace(5000, 1), Hybrid(month, 0.9, 0.2)},
		{"synthetic-8000-seed-4-dev-pools", syntheticTrace(8000, 4), devOptions()},
		{"synthetic-8000-seed-4-dev-pools-all-elastic", syntheticTrace(8000, 4), AllElastic(devOptions())},
		{"example-csv", fixtureTrace("example.csv", func(f *os.File) (trace.Trace, error) { return trace.ReadCSV(f, "example") }), busyOptions()},
		{"openb-small", fixtureTrace("openb_pod_list_small.csv", func(f *os.File) (trace.Trace, error) {
			tr, _, err := trace.ReadAlibabaGPU2023(f, trace.AlibabaGPUOptions{})
			return tr, err
		}), monthOptions(4, true)},
		{"pai-small", fixtureTrace("pai_job_table_small.csv", func(f *os.File) (trace.Trace, error) {
			tr, _, err := trace.ReadPAI2020(f, trace.PAIOptions{})
			return tr, err
		}), monthOptions(2, false)},
	}
}

// TestGoldenResults pins what the simulator measures on a set of small
// traces to the results recorded in testdata/golden: a change that makes
// the policy or the model faster must leave every figure, down to the last
// bit of every float, as it was.
func TestGoldenResults(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if slowUnderRace[c.name] {
				skipUnderRace(t)
			}
			r, err := Run(c.tr(t), c.o)
			if err != nil {
				t.Fatal(err)
			}
			checkPoolShares(t, r)
			got, err := json.MarshalIndent(goldenView(r), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", c.name+".json")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-golden to record it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("result differs from %s:\n got %s\nwant %s", path, got, want)
			}
			if r.Decisions == 0 || r.Jobs == 0 {
				t.Errorf("the case exercises too little: %d decisions, %d jobs", r.Decisions, r.Jobs)
			}
		})
	}
}

// goldenView is r without the per-pool figures added for flavors (quota,
// labels, waits by pool), which the recorded results predate: they must
// stay what they were to the last bit, and checkPoolShares holds the new
// figures to them instead.
func goldenView(r Result) Result {
	r.Pools = slices.Clone(r.Pools)
	for i := range r.Pools {
		p := &r.Pools[i]
		p.Labels, p.FixedSlots, p.CoreWait, p.BurstWait = nil, 0, WaitStats{}, WaitStats{}
	}
	return r
}

// checkPoolShares checks that the per-pool figures add up to the run's:
// every started job's wait is in one pool's, the fixed pools' quotas are
// the quota, and their costs the fixed cost.
func checkPoolShares(t *testing.T, r Result) {
	t.Helper()
	core, burst, quota, cost := 0, 0, 0, 0.0
	for _, p := range r.Pools {
		core += p.CoreWait.N
		burst += p.BurstWait.N
		if p.Kind == policy.PoolFixed {
			quota += p.FixedSlots
			cost += p.Cost
		}
		if p.CoreWait.P95 > r.CoreWait.Max || p.BurstWait.P95 > r.ElasticWait.Max {
			t.Errorf("pool %s: p95 waits %v and %v beyond the run's longest, %v and %v",
				p.Name, p.CoreWait.P95, p.BurstWait.P95, r.CoreWait.Max, r.ElasticWait.Max)
		}
	}
	if core != r.CoreWait.N || burst != r.ElasticWait.N || quota != r.FixedSlots || cost != r.Cost.Fixed {
		t.Errorf("pools hold %d core and %d burst waits, %d fixed slots costing %v; the run %d, %d, %d, %v",
			core, burst, quota, cost, r.CoreWait.N, r.ElasticWait.N, r.FixedSlots, r.Cost.Fixed)
	}
}
