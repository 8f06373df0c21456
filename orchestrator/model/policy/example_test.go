package policy_test

import (
	"fmt"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// A core job arrives while a burst job borrows the only fixed slot: the
// burst job is reclaimed and a spot worker is asked for to run it.
func ExampleDecide() {
	now := time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)
	s := policy.Snapshot{
		Config: policy.DefaultConfig(),
		Pools: []policy.Pool{
			{Name: "quota", Kind: policy.PoolFixed, Region: "eu", PricePerSlotHour: 0.5},
			{Name: "spot-eu", Kind: policy.PoolSpot, Region: "eu", PricePerSlotHour: 0.3,
				Billing: policy.BillingPerSecond, MaxWorkers: 4, SlotsPerWorker: 2, IdleTTL: 10 * time.Minute},
		},
		Workers: []policy.Worker{{ID: "q1", Pool: "quota", Slots: 1, Busy: 1, State: policy.WorkerUp}},
		Jobs: []policy.Job{
			{ID: "train-7", Class: jobs.ClassBurst, State: jobs.StateRunning, Worker: "q1", Pool: "quota",
				Checkpointable: true, Retryable: true, StartedAt: now.Add(-time.Hour), LastCheckpointAt: now.Add(-4 * time.Minute)},
			{ID: "nightly-etl", Class: jobs.ClassCore, State: jobs.StateQueued, Queue: policy.QueueCore, QueuedAt: now},
		},
	}
	fmt.Println(policy.Decide(s, now))
	// Output:
	// plan:
	//   reclaim job=train-7 worker=q1 -> burst (rule 1: 1 core queued, 0 free fixed slots, 0 reclaims in flight; loses 4m0s of work)
	//   scale_up pool=spot-eu n=1 (rule 3: 0 running + 1 queued need 1 workers of 2 slots (max 4, 0 draining); have 0 (+0 launching))
}

// Utilization is what the dashboard shows; Load has the parts.
func ExampleLoad() {
	s := policy.Snapshot{
		Pools:   []policy.Pool{{Name: "quota", Kind: policy.PoolFixed}},
		Workers: []policy.Worker{{ID: "q1", Pool: "quota", Slots: 10, Busy: 6, State: policy.WorkerUp}},
		Jobs:    []policy.Job{{ID: "etl", Class: jobs.ClassCore, State: jobs.StateQueued, Queue: policy.QueueCore}},
	}
	l := policy.Load(s)
	fmt.Printf("busy %.2f, committed %.2f, free %d\n", l.Utilization(), l.Committed(), l.Free())
	// Output: busy 0.60, committed 0.70, free 4
}
