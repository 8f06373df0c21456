package sim

import (
	"math"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

var traceStart = time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)

func coreJob(submit, dur time.Duration) trace.Job {
	return trace.Job{Submit: submit, Duration: dur, Slots: 1, Class: jobs.ClassCore, Template: "core"}
}

func burstJob(submit, dur time.Duration, ckpt bool) trace.Job {
	return trace.Job{Submit: submit, Duration: dur, Slots: 1, Class: jobs.ClassBurst, Template: "burst", Checkpointable: ckpt}
}

func mkTrace(js ...trace.Job) trace.Trace {
	trace.SortJobs(js)
	return trace.Trace{Name: "test", Start: traceStart, Jobs: js}
}

func quota(price float64) policy.Pool {
	return policy.Pool{Name: "quota", Kind: policy.PoolFixed, PricePerSlotHour: price}
}

func onDemand(price float64, slots int) policy.Pool {
	return policy.Pool{
		Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: price, Billing: policy.BillingPerSecond,
		StartupDelay: 3 * time.Minute, MaxWorkers: 20, SlotsPerWorker: slots, IdleTTL: 10 * time.Minute,
	}
}

func spotPool(price float64, slots int) policy.Pool {
	p := onDemand(price, slots)
	p.Name, p.Kind = "spot", policy.PoolSpot
	return p
}

func mustRun(t *testing.T, tr trace.Trace, o Options) Result {
	t.Helper()
	r, err := Run(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// near reports whether got is within rel (relative) of want.
func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), 1e-12)
}

func pool(t *testing.T, r Result, name string) PoolUsage {
	t.Helper()
	for _, p := range r.Pools {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no pool %q in %+v", name, r.Pools)
	return PoolUsage{}
}

func minutes(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }
