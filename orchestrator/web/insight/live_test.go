package insight_test

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/analysis/advisor"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
)

// TestLiveRefreshesNowEveryTimeAndHistoryAtItsPace: a job that starts shows
// at the next refresh; the cost it adds shows once the history is read
// again.
func TestLiveRefreshesNowEveryTimeAndHistoryAtItsPace(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.beat(0, queues.WorkerInfo{ID: "fixed-1", Pool: "onprem", Slots: 2, StartedAt: at(-1)})
	id := r.submit(0, "ml", jobs.ClassCore)
	live := &insight.Live{Source: insight.Source{Store: r.store, Accounting: r.acct, Pools: pools(), Quota: map[string]int{"onprem": 2}},
		Now: r.clk.Now, MaxAge: time.Second, PastMaxAge: time.Minute, AdviceMaxAge: time.Hour}
	o, err := live.Overview(r.ctx)
	if err != nil || len(o.Running) != 0 || len(o.Cost.Teams) != 0 {
		t.Fatalf("before: %v %+v", err, o)
	}
	r.claim(0, id, 1, "fixed-1")
	if o, _ := live.Overview(r.ctx); len(o.Running) != 0 {
		t.Fatalf("within MaxAge the cached overview is served: %+v", o.Running)
	}
	r.clk.Set(at(0).Add(2 * time.Second))
	o, _ = live.Overview(r.ctx)
	if len(o.Running) != 1 || o.Running[0].ID != id || o.Pools[0].Busy != 1 || len(o.Cost.Teams) != 0 {
		t.Fatalf("after MaxAge: running %+v, busy %d, teams %+v", o.Running, o.Pools[0].Busy, o.Cost.Teams)
	}
	r.clk.Set(at(1).Add(time.Second))
	o, _ = live.Overview(r.ctx)
	// 61 s of one slot at the quota's 1.0 an hour.
	if len(o.Cost.Teams) != 1 || o.Cost.Teams[0].Name != "ml" || !near(o.Cost.Teams[0].Cost, 61.0/3600) {
		t.Fatalf("after PastMaxAge: teams %+v", o.Cost.Teams)
	}
}

// TestLiveRefreshesAdviceInTheBackground: the first advice comes with the
// first overview; later ones are worked out behind the readers' backs and
// show once ready.
func TestLiveRefreshesAdviceInTheBackground(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.beat(0, queues.WorkerInfo{ID: "fixed-1", Pool: "onprem", Slots: 2, StartedAt: at(-1)})
	live := &insight.Live{Source: insight.Source{Store: r.store, Accounting: r.acct, Pools: pools(), Quota: map[string]int{"onprem": 2}, High: 0.7, Low: 0.4},
		Now: r.clk.Now, AdviceMaxAge: time.Minute}
	o, err := live.Overview(r.ctx)
	if err != nil || len(o.Recommendations) != 0 {
		t.Fatalf("first: %v %+v", err, o.Recommendations)
	}
	// Two hours of a quota 90% idle, then the advice is due again.
	for m := 0; m <= 120; m += 10 {
		if err := r.acct.RecordSample(r.ctx, advisor.SeriesFixedIdle, at(m), 0.9, 30*24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	r.clk.Set(at(121))
	testenv.Eventually(t, 5*time.Second, "the idle-quota advice", func() bool {
		o, err := live.Overview(r.ctx)
		r.clk.Set(r.clk.Now().Add(2 * time.Second)) // past MaxAge, not past AdviceMaxAge
		for _, rec := range o.Recommendations {
			if rec.Kind == advisor.KindFixedIdle {
				return err == nil
			}
		}
		return false
	})
}
