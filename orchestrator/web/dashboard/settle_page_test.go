package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/tools/browser"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
)

// TestPageShowsTheSettlement: the cost view reads the settlement of the
// overview's cost window from GET /api/v1/costs?settle=true and draws a
// row per team and the platform; without a share the panel stays hidden.
func TestPageShowsTheSettlement(t *testing.T) {
	t.Parallel()
	b := startBrowser(t)
	api := newFakeAPI(t)
	s := cost.Settlement{Rule: cost.RuleShare, LoanPrice: 1.5, LoanPricePerSlotHour: 1.5, Quota: 4, Common: 1,
		Teams: []cost.TeamSettlement{
			{Team: "ml", Share: 2, ShareCost: 48, UsedSlotHours: 30.5, OwnSlotHours: 24, LentSlotHours: 6.25, IdleSlotHours: 17.75,
				QuotaCharge: 48, LoanCredit: 9.375, Net: 38.625, IdleCostAlone: 24, IdleRecovered: 0.390625},
			{Team: "data", Share: 1, ShareCost: 24, UsedSlotHours: 40, OwnSlotHours: 20, OthersSlotHours: 6.25, CommonSlotHours: 13.75,
				BorrowedSlotHours: 20, QuotaCharge: 24, LoanPaid: 30, Elastic: 27.456, Net: 81.456, IdleCostAlone: 4},
			{Team: "", UsedSlotHours: 1, CommonSlotHours: 1, BorrowedSlotHours: 1, LoanPaid: 1.5, Net: 1.5},
		},
		Platform: cost.PlatformSettlement{CommonSlotHours: 24, CommonCost: 24, CommonLentSlotHours: 13.75, QuotaCharge: 24,
			LoanReceipts: 20.625, Net: 3.375}}
	var asked, serve atomic.Value
	serve.Store(s)
	api.mu.Lock()
	api.costs = func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.URL.Query())
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"settlement": serve.Load()})
	}
	api.mu.Unlock()
	if status, err := b.Open(api.srv.URL+"/dashboard", 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("opening the page: %d %v", status, err)
	}
	if err := b.WaitFor(`!document.getElementById('settle-panel').hidden`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	vals, err := b.Values(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for k, v := range map[string]string{
		"settle.team.ml.share":                 "2",
		"settle.team.ml.loan_credit":           f(9.375),
		"settle.team.ml.idle_recovered":        f(0.390625),
		"settle.team.data.loan_paid":           "30",
		"settle.team.data.common_slot_hours":   f(13.75),
		"settle.team.data.net":                 f(81.456),
		"settle.platform.loan_receipts":        f(20.625),
		"settle.platform.net":                  f(3.375),
		"settle.loan_price_per_slot_hour":      "1.5",
		"settle.team.data.borrowed_slot_hours": "20",
	} {
		if got, ok := vals[k]; !ok || got != v {
			t.Errorf("%s = %q (shown: %v), want %q", k, got, ok, v)
		}
	}
	if _, ok := vals["settle.team.(none).idle_recovered"]; ok {
		t.Errorf("jobs without a team have no share to recover, and show a figure")
	}
	if vals["settle.team.(none).loan_paid"] != "1.5" || vals["settle.team.data.idle_recovered"] != "0" {
		t.Errorf("no team's loan paid %q, data's recovered %q", vals["settle.team.(none).loan_paid"], vals["settle.team.data.idle_recovered"])
	}
	q, _ := asked.Load().(url.Values)
	if q.Get("settle") != "true" || q.Get("from") == "" || q.Get("until") == "" {
		t.Errorf("the page asked for %v", q)
	}

	// Without shares, the panel hides.
	s.Teams = []cost.TeamSettlement{{Team: "ml", UsedSlotHours: 3}}
	serve.Store(s)
	if _, err := b.Open(api.srv.URL+"/dashboard", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(`document.getElementById('settle-panel').dataset.reads === '1'`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	hidden, err := browser.Eval[bool](b, `document.getElementById('settle-panel').hidden`, 5*time.Second)
	if err != nil || !hidden {
		t.Errorf("panel hidden without shares: %v %v", hidden, err)
	}
}
