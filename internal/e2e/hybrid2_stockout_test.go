package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// hybrid2Pools is a fixed pool of fixedSlots, a cheap spot pool of up to
// spotMax one-slot workers and a dearer on-demand pool of up to odMax.
func hybrid2Pools(fixedSlots, spotMax, odMax int) map[string]config.PoolConfig {
	return map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: fixedSlots, PricePerSlotHour: 1},
		"spot": {Kind: config.PoolSpot, PricePerSlotHour: 0.8, Billing: config.BillingPerSecond,
			IdleTTL: jobs.Duration(time.Second), MaxWorkers: spotMax, SlotsPerWorker: 1},
		"ondemand": {Kind: config.PoolOnDemand, PricePerSlotHour: 2.5, Billing: config.BillingPerSecond,
			IdleTTL: jobs.Duration(time.Second), MaxWorkers: odMax, SlotsPerWorker: 1},
	}
}

// TestHybrid2StockOutFallsBackToOnDemand: the only fixed slot is busy, the
// spot pool is out of stock (every spot launch → ErrStockOut) and two
// spot-eligible burst jobs wait. Once the spot launch has stayed unfilled
// for SpotFallbackAfter, the controller launches on-demand workers, the
// jobs run there and succeed.
func TestHybrid2StockOutFallsBackToOnDemand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const fallbackAfter = time.Second
	r := newHybridRig(t, hybrid2Pools(1, 2, 2), 0.7, 0.4)
	fixed := r.startFixedWorker("fixed-1", 1)
	prov := r.stockOutProvider(map[string]int{"spot": 0})
	h := r.capacity(prov)
	h.Config.SpotFallbackAfter = fallbackAfter
	r.startController("ctl-1", h)

	long := r.submitSleep("core-long", jobs.ClassCore, 30)
	testenv.Eventually(t, 10*time.Second, "the core job holding the fixed slot", func() bool {
		j := r.job(long)
		r.mustNotFail(j)
		return j.State == jobs.StateRunning && j.Worker == fixed.ID()
	})

	submitted := time.Now()
	id1, rec1 := r.submitSteps("spot-eligible-1", 10)
	id2, rec2 := r.submitSteps("spot-eligible-2", 10)

	var firstOD time.Time
	testenv.Eventually(t, fallbackAfter+5*time.Second, "an on-demand launch after the spot stock-out", func() bool {
		for _, in := range listInstances(t, prov) {
			if in.Pool == "ondemand" && (firstOD.IsZero() || in.LaunchedAt.Before(firstOD)) {
				firstOD = in.LaunchedAt
			}
		}
		return !firstOD.IsZero()
	})
	t.Logf("stock-out fallback (burst jobs submitted -> first on-demand launch): %s (spot_fallback_after %s, tick %s)",
		firstOD.Sub(submitted).Round(time.Millisecond), fallbackAfter, hyTick)
	// The controller stamps a launch with its tick's time, read before the
	// tick reads the queues: a tick that began just before the submission
	// stamps the spot launch up to a tick before the test's clock does (a
	// loaded machine made it 22 ms once). A fallback that did not wait
	// would come within a tick or two of the submission.
	if d := firstOD.Sub(submitted); d < fallbackAfter-hyTick {
		t.Errorf("on-demand launched %s after submit, before spot_fallback_after (%s) elapsed", d, fallbackAfter)
	}

	testenv.Eventually(t, 20*time.Second, "both burst jobs succeeded", func() bool {
		for _, id := range []string{id1, id2} {
			j := r.job(id)
			r.mustNotFail(j)
			if j.State != jobs.StateSucceeded {
				return false
			}
		}
		return true
	})
	pools := map[string]string{}
	for _, in := range listInstances(t, prov) {
		pools[in.ID] = in.Pool
		if in.Pool == "spot" {
			t.Errorf("spot instance %s exists though spot capacity is 0", in.ID)
		}
	}
	for _, id := range []string{id1, id2} {
		if j := r.job(id); pools[j.Worker] != "ondemand" {
			t.Errorf("job %s ran on %q (pool %q), want an on-demand worker", id, j.Worker, pools[j.Worker])
		}
	}
	checkResumedSteps(t, id1, rec1, 10)
	checkResumedSteps(t, id2, rec2, 10)
	if j := r.job(long); j.State != jobs.StateRunning || j.Worker != fixed.ID() {
		t.Errorf("the core job is %s on %q, want still running on the fixed worker", j.State, j.Worker)
	}
}

// stockOutProvider is the rig's Local provider with per-pool capacities.
func (r *hybridRig) stockOutProvider(capacity map[string]int) *provider.Local {
	r.t.Helper()
	out, err := os.OpenFile(filepath.Join(r.dir, "elastic.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	prov, err := provider.NewLocal(provider.LocalOptions{Binary: r.bin, ConfigPath: r.cfgPath, Capacity: capacity,
		ReleaseTimeout: 10 * time.Second, Output: &lockedWriter{w: out}, Logger: quietLogger()})
	if err != nil {
		r.t.Fatalf("provider.NewLocal: %v", err)
	}
	r.t.Cleanup(func() {
		_ = prov.Close()
		_ = out.Close()
	})
	return prov
}
