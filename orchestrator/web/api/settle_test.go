package api_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// TestCostsSettle: ?settle=true adds the settlement between teams to the
// cost window. Team a runs two jobs on a 2-slot quota shared a 1, b 1, so
// it borrows b's slot and pays b for it.
func TestCostsSettle(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := t.Context()
	w := queues.WorkerInfo{ID: "fixed-1", Pool: "onprem", Slots: 2, StartedAt: time.Now().Add(-time.Hour)}
	if _, err := store.Heartbeat(ctx, w, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		sub, err := store.Submit(ctx, jobs.Spec{Template: "etl", Team: "a", Command: []string{"true"}, Class: jobs.ClassCore,
			Rhythm: jobs.RhythmPeriodic, Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, w.ID); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	team := func(name string) shares.Team {
		return shares.Team{Name: name, Slots: 1, LendLimit: 1, BorrowLimit: 2, ReclaimWithin: time.Minute}
	}
	live := &insight.Live{Source: insight.Source{Store: store, Accounting: usage.New(store), Quota: map[string]int{"onprem": 2},
		Pools:  []policy.Pool{{Name: "onprem", Kind: policy.PoolFixed, PricePerSlotHour: 1.5}},
		Shares: shares.Config{Teams: []shares.Team{team("a"), team("b")}}}}
	srv := httptest.NewServer(api.Handler(store, nil, "s3cret", api.Flows{}, api.Insight{Live: live}))
	t.Cleanup(srv.Close)
	get := func(path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}

	var body struct {
		Report     cost.Report      `json:"report"`
		Settlement *cost.Settlement `json:"settlement"`
	}
	res := get("/api/v1/costs?window=2h")
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 200 || body.Settlement != nil {
		t.Fatalf("without settle: %d %v %+v", res.StatusCode, err, body.Settlement)
	}
	res = get("/api/v1/costs?window=2h&settle=true")
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 200 || body.Settlement == nil {
		t.Fatalf("settle: %d %v", res.StatusCode, err)
	}
	s := *body.Settlement
	if s.Rule != cost.RuleShare || len(s.Teams) != 2 || s.Teams[0].Team != "a" || s.Teams[1].Team != "b" {
		t.Fatalf("settlement %+v", s)
	}
	a, b := s.Teams[0], s.Teams[1]
	if a.LoanPaid <= 0 || math.Abs(a.LoanPaid-b.LoanCredit) > 1e-12 || b.LentSlotHours <= 0 {
		t.Errorf("a pays b: a %+v b %+v", a, b)
	}
	// Two hours of a 2-slot quota at 1.5: each share costs 3.
	if math.Abs(a.ShareCost-3) > 1e-9 || math.Abs(b.ShareCost-3) > 1e-9 || math.Abs(s.Sum()-body.Report.Total.PaidCost) > 1e-9 {
		t.Errorf("shares %v and %v, nets %v of %v paid", a.ShareCost, b.ShareCost, s.Sum(), body.Report.Total.PaidCost)
	}
	if res := get("/api/v1/costs?window=2h&settle=maybe"); res.StatusCode != 400 {
		t.Errorf("settle=maybe: %d", res.StatusCode)
	}
}
