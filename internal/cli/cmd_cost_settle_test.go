package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestCostSettlesBetweenTeams: on a 4-slot quota shared by a (2) and b
// (2), a runs 3 jobs while b runs none, so a borrows one of b's slots:
// --settle shows a's loan paid and b's loan credit, in a table and in
// JSON, and the nets add up to what was paid.
func TestCostSettlesBetweenTeams(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	path := filepath.Join(t.TempDir(), "ballast.yaml")
	yaml := fmt.Sprintf(`namespace: %s
redis: {addr: %s}
nats: {url: %s, subject_prefix: %s}
pools:
  fixed: {kind: fixed, slots: 4, price_per_slot_hour: 2}
templates:
  work: {command: ["true"]}
shares:
  teams:
    a: {slots: 2, reclaim_within: 1m}
    b: {slots: 2, reclaim_within: 1m}
chargeback: {loan_price: 1.5}
`, ns, testenv.RedisAddr(), unreachableNATS, ns)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	w := queues.WorkerInfo{ID: "fixed-w", Pool: "fixed", Slots: 4, StartedAt: time.Now().Add(-time.Minute)}
	if _, err := store.Heartbeat(ctx, w, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		sub, err := store.Submit(ctx, jobs.Spec{Template: "work", Team: "a", Command: []string{"true"}, Class: jobs.ClassCore,
			Rhythm: jobs.RhythmPeriodic, Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, w.ID); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
	}
	// Let the attempts run long enough to be worth a few digits.
	time.Sleep(50 * time.Millisecond)

	code, out, errOut := run(t, "cost", "--config", path, "--window", "1h", "--by", "team", "--settle", "-o", "json")
	if code != 0 {
		t.Fatalf("code %d err %q", code, errOut)
	}
	var got struct {
		Report     cost.Report
		Settlement cost.Settlement
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	s := got.Settlement
	if s.Rule != cost.RuleShare || s.LoanPrice != 1.5 || s.Quota != 4 || s.Common != 0 || len(s.Teams) != 2 {
		t.Fatalf("settlement %+v", s)
	}
	a, b := s.Teams[0], s.Teams[1]
	if a.Team != "a" || b.Team != "b" || a.LoanPaid <= 0 || b.LoanCredit <= 0 || math.Abs(a.LoanPaid-b.LoanCredit) > 1e-12 {
		t.Errorf("a pays b for one slot: a %+v, b %+v", a, b)
	}
	// a borrowed at most a third of what it used (its jobs were claimed
	// one after the other), at 1.5 × 2 per slot-hour.
	if a.BorrowedSlotHours*3 > a.UsedSlotHours+1e-12 || math.Abs(a.LoanPaid-a.BorrowedSlotHours*3) > 1e-12 {
		t.Errorf("a borrowed %v of %v slot-hours and paid %v", a.BorrowedSlotHours, a.UsedSlotHours, a.LoanPaid)
	}
	if d := s.Sum() - got.Report.Total.PaidCost; math.Abs(d) > 1e-9*got.Report.Total.PaidCost {
		t.Errorf("nets add up to %v, paid %v", s.Sum(), got.Report.Total.PaidCost)
	}

	code, out, errOut = run(t, "cost", "--config", path, "--window", "1h", "--settle")
	if code != 0 {
		t.Fatalf("table: code %d err %q", code, errOut)
	}
	for _, want := range []string{"settled by share", "LOAN-PAID", "LOAN-CREDIT", "(platform)", "LENDER"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table does not show %q:\n%s", want, out)
		}
	}
	if code, _, errOut := run(t, "cost", "--config", path, "--by", "pool", "--settle"); code != 2 || !strings.Contains(errOut, "use it with --by team") {
		t.Errorf("--by pool --settle: code %d err %q", code, errOut)
	}
}
