package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/telemetry"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues/usage"
)

// TestMetricsAfterAScriptedScenario: two burst jobs are lent to the fixed
// worker, a core job reclaims one slot, then a core job fails and another
// is cancelled. /metrics, fed by the job events and the per-tick snapshot
// as in `ballast controller`, then shows exactly those outcomes, one
// reclaim, a wait for every start, empty queues and an idle fixed pool.
func TestMetricsAfterAScriptedScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	r := newHybridRig(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 2, PricePerSlotHour: 1.5},
	}, 1.0, 0.4)
	r.startFixedWorker("fixed-1", 2)
	ctl := r.startController("ctl-1", r.capacity(nil))
	m, err := telemetry.New(telemetry.Options{DisableOTLP: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	sub, err := m.Follow(r.nc, r.subj, ctl.Leader)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// The controller's own collector, pricing today's cost on every tick
	// rather than once a minute.
	col := &insight.Collector{Source: insight.Source{Store: r.store, Accounting: usage.New(r.store), Pools: r.cfg.PolicyPools(), Quota: map[string]int{"fixed": 2}},
		CostEvery: time.Nanosecond}
	go m.Poll(ctx, hyTick, ctl.Leader, col.Collect)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)

	scenarioStart := time.Now()
	a, _ := r.submitSteps("burst-a", 20)
	b, _ := r.submitSteps("burst-b", 20)
	testenv.Eventually(t, 15*time.Second, "both burst jobs lent and running", func() bool {
		return r.job(a).State == jobs.StateRunning && r.job(b).State == jobs.StateRunning
	})
	core := r.submitSleep("core-ok", jobs.ClassCore, 0.5)
	waitEnded := func(ids ...string) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, "jobs ended", func() bool {
			for _, id := range ids {
				if !r.job(id).State.Terminal() {
					return false
				}
			}
			return true
		})
	}
	waitEnded(a, b, core)
	bad := r.submitSleep("core-bad", jobs.ClassCore, -1) // sleep refuses a negative time: exit 1
	long := r.submitSleep("core-cancelled", jobs.ClassCore, 30)
	testenv.Eventually(t, 10*time.Second, "the long core job running", func() bool { return r.job(long).State == jobs.StateRunning })
	if _, err := r.store.Cancel(context.Background(), long); err != nil {
		t.Fatal(err)
	}
	waitEnded(bad, long)
	if st := r.job(bad).State; st != jobs.StateFailed {
		t.Fatalf("the bad core job ended %s", st)
	}

	var fams map[string]*dto.MetricFamily
	value := func(name string, labels map[string]string) float64 {
		fam := fams[name]
		if fam == nil {
			return -1
		}
	next:
		for _, mt := range fam.GetMetric() {
			got := map[string]string{}
			for _, l := range mt.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			switch {
			case mt.Counter != nil:
				return mt.GetCounter().GetValue()
			case mt.Gauge != nil:
				return mt.GetGauge().GetValue()
			case mt.Histogram != nil:
				return float64(mt.GetHistogram().GetSampleCount())
			}
		}
		return -1
	}
	want := []struct {
		name   string
		labels map[string]string
		v      float64
	}{
		{"ballast_jobs_finished_total", map[string]string{"class": "burst", "outcome": "succeeded"}, 2},
		{"ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "succeeded"}, 1},
		{"ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "failed"}, 1},
		{"ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "cancelled"}, 1},
		{"ballast_preemptions_total", map[string]string{"reason": "reclaim"}, 1},
		// Starts: two burst jobs, the reclaimed one again, and three core jobs.
		{"ballast_job_wait_seconds", map[string]string{"class": "burst", "pool": "fixed"}, 3},
		{"ballast_job_wait_seconds", map[string]string{"class": "core", "pool": "fixed"}, 3},
		{"ballast_queue_depth", map[string]string{"queue": "core"}, 0},
		{"ballast_queue_depth", map[string]string{"queue": "loan"}, 0},
		{"ballast_slots", map[string]string{"pool": "fixed", "state": "idle"}, 2},
		{"ballast_slots", map[string]string{"pool": "fixed", "state": "busy"}, 0},
		{"ballast_workers", map[string]string{"pool": "fixed", "state": "up"}, 1},
		{"ballast_fixed_idle_ratio", nil, 1},
		{"ballast_cost_rate_per_hour", map[string]string{"pool": "fixed"}, 3},
	}
	testenv.Eventually(t, 10*time.Second, "/metrics shows the scenario", func() bool {
		res, err := http.Get(srv.URL)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err = parser.TextToMetricFamilies(res.Body)
		if err != nil {
			return false
		}
		for _, w := range want {
			if value(w.name, w.labels) != w.v {
				return false
			}
		}
		return true
	})
	for _, w := range want {
		if got := value(w.name, w.labels); got != w.v {
			t.Errorf("%s%v = %v, want %v", w.name, w.labels, got, w.v)
		}
	}
	// Today's cost: the quota is paid from when the controller first led
	// (it started after midnight), 2 slots x 1.5 an hour; the jobs (no
	// team) were charged the slot time they used at the quota's price, at
	// least the 0.5 s core job's and less than the scenario's whole span on
	// both slots. The ±0.01 is 12 s of the quota: the last pricing is at
	// most a tick old.
	now := time.Now().UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if scenarioStart.UTC().Before(midnight) {
		t.Skip("the scenario crossed midnight UTC, where today's cost starts again")
	}
	started, err := r.store.Started(context.Background())
	if err != nil || started.Before(midnight) || started.After(now) {
		t.Fatalf("the controller's recorded start %s (%v) is not between midnight and now %s", started, err, now)
	}
	quota := 3 * now.Sub(started).Hours()
	if got := value("ballast_cost_pool_today", map[string]string{"pool": "fixed"}); got < quota-0.01 || got > quota+0.01 {
		t.Errorf("ballast_cost_pool_today{pool=fixed} = %v, want %.4f (±0.01)", got, quota)
	}
	spent := time.Since(scenarioStart).Hours() * 2 * 1.5
	if got := value("ballast_cost_team_today", map[string]string{"team": insight.NoTeam}); got < 0.5/3600*1.5 || got > spent {
		t.Errorf("ballast_cost_team_today{team=%s} = %v, want in [%.6f, %.6f]", insight.NoTeam, got, 0.5/3600*1.5, spent)
	}
}
