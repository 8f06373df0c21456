package insight_test

import (
	"math"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/advisor"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
)

// TestSettleAndShareAdviceFromLiveRecords: a 2-slot quota shared etl 1,
// ml 1 for four hours. etl runs one job 0 → 90 min and another 10 → 40,
// on ml's idle slot; ml runs one 40 → 60. Settled from the store's
// records, etl pays ml half a slot-hour; and ml, whose own work left its
// share idle 11/12 of the time, is advised a smaller share.
func TestSettleAndShareAdviceFromLiveRecords(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	fixed := queues.WorkerInfo{ID: "fixed-1", Pool: "onprem", Slots: 2, StartedAt: at(-60)}
	r.beat(0, fixed)
	e1 := r.claim(0, r.submit(0, "etl", jobs.ClassCore), 1, fixed.ID)
	e2 := r.claim(10, r.submit(10, "etl", jobs.ClassCore), 1, fixed.ID)
	r.finish(40, e2)
	m1 := r.claim(40, r.submit(40, "ml", jobs.ClassCore), 1, fixed.ID)
	r.finish(60, m1)
	r.finish(90, e1)
	r.beat(240, fixed)

	team := func(name string) shares.Team {
		return shares.Team{Name: name, Slots: 1, LendLimit: 1, BorrowLimit: 2, ReclaimWithin: time.Minute}
	}
	src := insight.Source{Store: r.store, Accounting: r.acct, Pools: pools(), Quota: map[string]int{"onprem": 2},
		Shares: shares.Config{Teams: []shares.Team{team("etl"), team("ml")}}}
	rep, st, problems, err := src.Settle(r.ctx, at(0), at(240))
	if err != nil || len(problems) > 0 {
		t.Fatalf("settle: %v %v", err, problems)
	}
	rows := map[string]cost.TeamSettlement{}
	for _, tm := range st.Teams {
		rows[tm.Team] = tm
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"paid", st.Total, 8},
		{"nets add up", st.Sum(), rep.Total.PaidCost},
		{"etl borrowed", rows["etl"].BorrowedSlotHours, 0.5},
		{"etl loan paid", rows["etl"].LoanPaid, 0.5},
		{"ml loan credit", rows["ml"].LoanCredit, 0.5},
		{"ml own", rows["ml"].OwnSlotHours, 1.0 / 3},
		{"ml net", rows["ml"].Net, 4 - 0.5},
		{"etl net", rows["etl"].Net, 4 + 0.5},
		{"ml recovered", rows["ml"].IdleRecovered, 0.5 / (4 - 1.0/3)},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s: got %.9f, want %.9f", c.name, c.got, c.want)
		}
	}

	// ml held its slot 20 of 240 minutes: idle 11/12 of its own share,
	// none of its slots nine tenths of the time. etl, busy at its peaks
	// beyond its share, keeps its share.
	w, recs, err := src.Advise(r.ctx, at(0), at(240))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Teams) != 2 {
		t.Fatalf("window teams %+v", w.Teams)
	}
	var advice []advisor.Recommendation
	for _, rec := range recs {
		if rec.Kind == advisor.KindShareIdle {
			advice = append(advice, rec)
		}
	}
	if len(advice) != 1 || advice[0].Evidence.Share.Team != "ml" || advice[0].Evidence.Share.Suggested != 0 ||
		math.Abs(advice[0].Evidence.Share.OwnIdle-1+1.0/12) > 1e-9 || math.Abs(advice[0].Evidence.Share.Lent-0.125) > 1e-9 {
		t.Fatalf("share advice %+v", advice)
	}
}
