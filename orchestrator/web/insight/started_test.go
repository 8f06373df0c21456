package insight_test

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// TestAControllerStartedTwoMinutesAgoPaysTwoMinutesOfQuota: a controller
// first leads at 10:00 and a core job runs on the quota from 10:01. At
// 10:02 today's cost, a 24-hour window and the overview all price two
// minutes of the quota, not ten hours since midnight or a day, and the
// idle share is taken over the same two minutes.
func TestAControllerStartedTwoMinutesAgoPaysTwoMinutesOfQuota(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, err := controller.New(r.store, controller.Options{ID: "c1", Now: r.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	r.clk.Set(at(0))
	c.Tick(r.ctx)
	if !c.Leader() {
		t.Fatal("the only controller does not lead")
	}
	r.beat(0, queues.WorkerInfo{ID: "fixed-1", Pool: "onprem", Slots: 2, StartedAt: at(0)})
	r.claim(1, r.submit(1, "ml", jobs.ClassCore), 1, "fixed-1")
	r.clk.Set(at(2))
	now := at(2)

	src := insight.Source{Store: r.store, Accounting: r.acct, Pools: pools(), Quota: map[string]int{"onprem": 2}}
	// Paid: 2 quota slots x 1.0 an hour x 2/60 h = 4/60. Used: the job's one
	// slot for a minute, 1/60. Idle: 3/60, a share of 3/4 of the 4
	// slot-minutes paid. (From midnight it would be 2 x 10 h 2 min = 20.07
	// paid and 0.9992 idle.)
	wantPaid, wantUsed := 2*1.0*2.0/60, 1.0/60
	for _, w := range []struct {
		name string
		from time.Time
	}{
		{"today", src.DayStart(now)},
		{"24h", now.Add(-24 * time.Hour)},
	} {
		rep, problems, err := src.Cost(r.ctx, w.from, now)
		if err != nil || len(problems) > 0 {
			t.Fatalf("%s: %v %v", w.name, err, problems)
		}
		if !rep.From.Equal(at(0)) || !near(rep.Total.FixedCost, wantPaid) || !near(rep.Total.Cost, wantUsed) ||
			!near(rep.Total.IdleCost, wantPaid-wantUsed) || !near(rep.Fixed.IdleShare, 0.75) {
			t.Errorf("%s: from %s paid %.6f charged %.6f idle %.6f (share %.4f); want from %s, %.6f, %.6f, %.6f (0.75)",
				w.name, rep.From, rep.Total.FixedCost, rep.Total.Cost, rep.Total.IdleCost, rep.Fixed.IdleShare,
				at(0), wantPaid, wantUsed, wantPaid-wantUsed)
		}
	}
	// A window inside Ballast's life is priced whole: 10:01 → 10:02 is
	// one minute of two slots, 2/60, all of the job's minute used.
	if rep, _, err := src.Cost(r.ctx, at(1), now); err != nil || !rep.From.Equal(at(1)) || !near(rep.Total.FixedCost, 2.0/60) ||
		!near(rep.Total.IdleCost, 1.0/60) {
		t.Errorf("10:01 → 10:02: %v from %s paid %.6f idle %.6f", err, rep.From, rep.Total.FixedCost, rep.Total.IdleCost)
	}

	live := &insight.Live{Source: src, Now: r.clk.Now, AdviceMaxAge: time.Hour}
	o, err := live.Overview(r.ctx)
	if err != nil || !o.Cost.From.Equal(at(0)) || !near(o.Cost.Total, wantPaid) || !near(o.Cost.Idle, wantPaid-wantUsed) ||
		len(o.Cost.Pools) == 0 {
		t.Fatalf("overview: %v %+v", err, o.Cost)
	}
	for _, p := range o.Cost.Pools {
		if p.Pool == "onprem" && (!near(p.Paid, wantPaid) || !near(p.IdleShare, 0.75)) {
			t.Errorf("overview's quota pool: %+v", p)
		}
	}
	// The series' buckets that ended before 10:00 have no data: a chart
	// draws them as a gap, not as a zero wait or no preemptions.
	var gaps, known int
	for _, b := range o.Key.Series {
		before := !b.From.Add(insight.DefaultSeriesStep).After(at(0))
		if b.NoData != before {
			t.Errorf("bucket from %s: no_data %v, want %v (started %s)", b.From, b.NoData, before, at(0))
		}
		if b.NoData {
			gaps++
		} else {
			known++
		}
	}
	if gaps == 0 || known == 0 {
		t.Errorf("%d buckets without data and %d with: want both", gaps, known)
	}
	col := &insight.Collector{Source: src, Now: r.clk.Now}
	snap, err := col.Collect(r.ctx)
	if err != nil || !near(snap.CostTodayByPool["onprem"], wantPaid) {
		t.Errorf("the metrics' cost today: %v %v, want %.6f", err, snap.CostTodayByPool, wantPaid)
	}

	// A second controller, or this one restarted, later leaves the start.
	c2, err := controller.New(r.store, controller.Options{ID: "c2", Now: r.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	c2.Tick(r.ctx)
	if got, err := r.store.Started(r.ctx); err != nil || !got.Equal(at(0)) {
		t.Fatalf("after a second controller led at %s: started %s %v, want %s", now, got, err, at(0))
	}
}

// TestRecordsOlderThanTheRecordedStartArePriced: an install upgraded to a
// version that records its start has records from before it; the window is
// priced from the oldest of them, and without a recorded start it is
// priced whole.
func TestRecordsOlderThanTheRecordedStartArePriced(t *testing.T) {
	src := insight.Source{Pools: pools(), Quota: map[string]int{"onprem": 2}}
	attempts := []usage.AttemptUsage{{JobID: "j", Pool: "onprem", Queued: at(30), Start: at(40), End: at(50)}}
	lives := []usage.WorkerLife{{ID: "fixed-1", Pool: "onprem", Start: at(20)}}
	for _, c := range []struct {
		name    string
		started time.Time
		lives   []usage.WorkerLife
		want    time.Time
	}{
		{"no recorded start", time.Time{}, lives, at(0)},
		{"start inside, no older record", at(10), lives, at(10)},
		{"start after a worker's life began", at(60), lives, at(20)},
		{"start after an attempt was queued", at(60), nil, at(30)},
		{"start before the window", at(-30), lives, at(0)},
		{"start after the window", at(200), nil, at(30)},
	} {
		l, _ := src.LedgerOf(at(0), at(120), c.started, attempts, c.lives)
		if !l.From.Equal(c.want) || !l.Until.Equal(at(120)) {
			t.Errorf("%s: ledger %s → %s, want from %s", c.name, l.From, l.Until, c.want)
		}
	}
	if l, _ := src.LedgerOf(at(0), at(120), at(200), nil, nil); !l.From.Equal(at(120)) {
		t.Errorf("started after the window, no records: from %s, want the empty window at %s", l.From, at(120))
	}
}
