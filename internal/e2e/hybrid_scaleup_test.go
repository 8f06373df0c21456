package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// hybridElasticPools is a fixed pool of fixedSlots and an on-demand pool of
// up to three one-slot workers, billed per second with no minimum and
// released after one idle second.
func hybridElasticPools(fixedSlots int) map[string]config.PoolConfig {
	return map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: fixedSlots, PricePerSlotHour: 1},
		"ondemand": {Kind: config.PoolOnDemand, PricePerSlotHour: 2.5, Billing: config.BillingPerSecond,
			MinBilling: 0, StartupDelay: jobs.Duration(300 * time.Millisecond), IdleTTL: jobs.Duration(time.Second),
			MaxWorkers: 3, SlotsPerWorker: 1},
	}
}

func listInstances(t *testing.T, prov provider.Provider) []provider.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	insts, err := prov.List(ctx)
	if err != nil {
		t.Fatalf("provider.List: %v", err)
	}
	return insts
}

// TestHybridScaleUpAndReleaseToZero: with the only fixed slot held by a core
// job, three non-checkpointable burst jobs make the controller launch three
// on-demand workers (real `ballast worker` children); the jobs run there,
// and once they are done the idle workers are released and the registry is
// back to the fixed worker alone.
func TestHybridScaleUpAndReleaseToZero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	r := newHybridRig(t, hybridElasticPools(1), 0.7, 0.4)
	fixed := r.startFixedWorker("fixed-1", 1)
	prov := r.localProvider(map[string]time.Duration{"ondemand": 300 * time.Millisecond})
	r.startController("ctl-1", r.capacity(prov))

	long := r.submitSleep("core-long", jobs.ClassCore, 30)
	testenv.Eventually(t, 10*time.Second, "the core job holding the fixed slot", func() bool {
		j := r.job(long)
		r.mustNotFail(j)
		return j.State == jobs.StateRunning && j.Worker == fixed.ID()
	})

	backlogAt := time.Now()
	ids := []string{
		r.submitSleep("burst-1", jobs.ClassBurst, 2),
		r.submitSleep("burst-2", jobs.ClassBurst, 2),
		r.submitSleep("burst-3", jobs.ClassBurst, 2),
	}
	var launched []provider.Instance
	testenv.Eventually(t, 5*time.Second, "three on-demand launches", func() bool {
		launched = listInstances(t, prov)
		return len(launched) >= 3
	})
	firstLaunch := launched[0].LaunchedAt
	for _, in := range launched {
		if in.Pool != "ondemand" {
			t.Errorf("instance %s launched in pool %q, want ondemand", in.ID, in.Pool)
		}
		if in.LaunchedAt.Before(firstLaunch) {
			firstLaunch = in.LaunchedAt
		}
	}
	t.Logf("scale-up reaction (backlog submitted -> launch requested): %s (tick %s)",
		firstLaunch.Sub(backlogAt).Round(time.Millisecond), hyTick)
	if d := firstLaunch.Sub(backlogAt); d > 3*hyTick {
		t.Errorf("launch requested %s after the backlog, want within about one tick (%s; allowed %s)", d, hyTick, 3*hyTick)
	}

	instIDs := map[string]bool{}
	for _, in := range launched {
		instIDs[in.ID] = true
	}
	testenv.Eventually(t, 20*time.Second, "the burst jobs succeeded", func() bool {
		for _, id := range ids {
			j := r.job(id)
			r.mustNotFail(j)
			if j.State != jobs.StateSucceeded {
				return false
			}
		}
		return true
	})
	var lastDone time.Time
	for _, id := range ids {
		j := r.job(id)
		if !instIDs[j.Worker] {
			t.Errorf("burst job %s ran on %q, not on a launched on-demand worker %v", id, j.Worker, instIDs)
		}
		if j.FinishedAt.After(lastDone) {
			lastDone = j.FinishedAt
		}
	}
	if n := len(listInstances(t, prov)); n != 3 {
		t.Errorf("%d instances launched, want 3 (max_workers 3, one slot each)", n)
	}

	testenv.Eventually(t, 15*time.Second, "the registry back to the fixed worker alone", func() bool {
		ws := r.workers()
		return len(ws) == 1 && ws[0].ID == fixed.ID()
	})
	t.Logf("release reaction (last burst job finished -> elastic workers gone): %s (idle_ttl 1s, tick %s)",
		time.Since(lastDone).Round(time.Millisecond), hyTick)
	testenv.Eventually(t, 10*time.Second, "every on-demand instance gone", func() bool {
		for _, in := range listInstances(t, prov) {
			if in.State != provider.Gone {
				return false
			}
		}
		return true
	})
	if j := r.job(long); j.State != jobs.StateRunning || j.Worker != fixed.ID() {
		t.Errorf("the core job is %s on %q, want still running on the fixed worker", j.State, j.Worker)
	}
}
