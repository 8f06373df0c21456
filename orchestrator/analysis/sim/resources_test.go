package sim

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Jobs' CPUs and memory bind on pools that declare what their workers
// offer, as rule 8 places them live: four one-slot jobs of 16 CPUs need
// two 4-slot machines of 32 CPUs, and one machine when the pool declares
// none (the jobs are then placed as if they asked for none).
func TestCPUsAndMemoryBindWherePoolsDeclareThem(t *testing.T) {
	var tr trace.Trace
	for range 4 {
		tr.Jobs = append(tr.Jobs, trace.Job{Duration: time.Hour, Slots: 1, Class: jobs.ClassBurst, CPUs: 16, Memory: 8 << 30})
	}
	od := policy.Pool{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 1, Billing: policy.BillingPerSecond,
		StartupDelay: time.Minute, IdleTTL: time.Minute, SlotsPerWorker: 4, MaxWorkers: 10}
	for _, c := range []struct {
		name        string
		cpus        float64
		memory      int64
		wantWorkers int
	}{
		{"cpus declared", 32, 0, 2},
		{"memory declared", 0, 16 << 30, 2},
		{"both roomy", 64, 64 << 30, 1},
		{"none declared", 0, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := od
			p.CPUs, p.Memory = c.cpus, c.memory
			r := runChecked(t, tr, Options{Pools: []policy.Pool{p}, Tick: time.Second})
			if r.Jobs != 4 || r.PeakElasticWorkers != c.wantWorkers {
				t.Errorf("%d jobs on at most %d workers; want 4 on %d", r.Jobs, r.PeakElasticWorkers, c.wantWorkers)
			}
		})
	}
}
