package cost

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	teamshares "github.com/ballastdev/ballast/orchestrator/model/shares"
)

// mustSettle settles l and checks what every settlement must satisfy:
// the nets add up to what was paid, each share's time is used, lent or
// idle, and what borrowers paid is what lenders and the platform got.
func mustSettle(t *testing.T, l Ledger, sh teamshares.Config, cb Chargeback) Settlement {
	t.Helper()
	s, err := Settle(l, sh, cb)
	if err != nil {
		t.Fatalf("Settle: %v", err)
	}
	checkSettlement(t, l, s)
	return s
}

func checkSettlement(t *testing.T, l Ledger, s Settlement) {
	t.Helper()
	r := mustCompute(t, l)
	tol := 1e-9 * max(1, math.Abs(s.Total))
	if math.Abs(s.Total-r.Total.PaidCost) > tol {
		t.Errorf("total %.12f, the report paid %.12f", s.Total, r.Total.PaidCost)
	}
	if d := s.Sum() - s.Total; math.Abs(d) > tol {
		t.Errorf("%s: nets + platform = %.12f, paid %.12f (off by %g)", s.Rule, s.Sum(), s.Total, d)
	}
	var paid, credit, borrowed, lent, used float64
	for _, tm := range s.Teams {
		// Slot-hours are compared to the window's size, money to the total.
		hTol := 1e-9 * max(1, float64(s.Quota)*s.Until.Sub(s.From).Hours())
		if d := tm.OwnSlotHours + tm.LentSlotHours + tm.IdleSlotHours - tm.ShareSlotHours; math.Abs(d) > hTol {
			t.Errorf("team %q: own %.6f + lent %.6f + idle %.6f != share %.6f", tm.Team, tm.OwnSlotHours,
				tm.LentSlotHours, tm.IdleSlotHours, tm.ShareSlotHours)
		}
		if tm.IdleSlotHours < -hTol || tm.LentSlotHours < -hTol {
			t.Errorf("team %q: negative idle %.9f or lent %.9f", tm.Team, tm.IdleSlotHours, tm.LentSlotHours)
		}
		paid += tm.LoanPaid
		credit += tm.LoanCredit
		borrowed += tm.BorrowedSlotHours
		lent += tm.LentSlotHours
		used += tm.UsedSlotHours
	}
	if d := paid - credit - s.Platform.LoanReceipts; math.Abs(d) > tol {
		t.Errorf("loans paid %.9f != credited %.9f + platform %.9f", paid, credit, s.Platform.LoanReceipts)
	}
	if d := borrowed - lent - s.Platform.CommonLentSlotHours; math.Abs(d) > 1e-6 {
		t.Errorf("borrowed %.9f slot-hours != lent %.9f + common %.9f", borrowed, lent, s.Platform.CommonLentSlotHours)
	}
	if d := used - r.Fixed.SlotHours; math.Abs(d) > 1e-6 {
		t.Errorf("teams used %.9f fixed slot-hours, the report %.9f", used, r.Fixed.SlotHours)
	}
}

func teamRow(t *testing.T, s Settlement, name string) TeamSettlement {
	t.Helper()
	return row(t, s.Teams, func(r TeamSettlement) string { return r.Team }, name)
}

func flowOf(fs []Flow, team string) Flow {
	for _, f := range fs {
		if f.Team == team {
			return f
		}
	}
	return Flow{Team: team}
}

// settleLedger is ten hours of a 4-slot quota at 1 per slot-hour shared
// by alpha (2 slots) and beta (1), one slot common:
//
//   - alpha runs one slot all along;
//   - beta runs 3 slots for 4 h: 1 in its share, 1 on common and 1 on
//     alpha's idle slot (common first, then the lenders' idle);
//   - a job without a team runs one slot from 6 h to 8 h, on common;
//   - alpha runs a spot attempt for 1 h on a 2 h spot worker at 3.
func settleLedger() Ledger {
	fixed := policy.Pool{Name: "fixed", Kind: policy.PoolFixed}
	spot := policy.Pool{Name: "spot", Kind: policy.PoolSpot, PricePerSlotHour: 3,
		Billing: policy.BillingPerSecond, SlotsPerWorker: 1}
	u := func(job, team, pool string, slots int, from, to time.Duration) Usage {
		return Usage{JobID: job, Team: team, Pool: pool, Slots: slots, Start: at(from), End: at(to)}
	}
	return Ledger{
		Pools:   []policy.Pool{fixed, spot},
		Quotas:  []Quota{{Pool: "fixed", Slots: 4, PricePerSlotHour: 1}},
		Workers: []WorkerSpan{{ID: "s1", Pool: "spot", Start: at(0), End: at(2 * h)}},
		Usage: []Usage{
			u("a1", "alpha", "fixed", 1, 0, 10*h),
			u("b1", "beta", "fixed", 3, 0, 4*h),
			u("x1", "", "fixed", 1, 6*h, 8*h),
			u("a2", "alpha", "spot", 1, 0, 1*h),
		},
		From: at(0), Until: at(10 * h),
	}
}

var settleShares = teamshares.Config{Teams: []teamshares.Team{
	{Name: "alpha", Slots: 2, LendLimit: 2, BorrowLimit: 4},
	{Name: "beta", Slots: 1, LendLimit: 1, BorrowLimit: 4},
}}

// TestSettleShareByHand checks every figure of the share rule with a loan
// price of twice the fixed price.
func TestSettleShareByHand(t *testing.T) {
	s := mustSettle(t, settleLedger(), settleShares, Chargeback{LoanPrice: ptr(2)})
	if s.Rule != RuleShare || s.LoanPrice != 2 || s.LoanPricePerSlotHour != 2 || s.Quota != 4 || s.Common != 1 {
		t.Errorf("header: %+v", s)
	}
	near(t, "total", s.Total, 46) // quota 40 + spot worker 2 h at 3

	a := teamRow(t, s, "alpha")
	near(t, "alpha share slot-hours", a.ShareSlotHours, 20)
	near(t, "alpha share cost", a.ShareCost, 20)
	near(t, "alpha used", a.UsedSlotHours, 10)
	near(t, "alpha own", a.OwnSlotHours, 10)
	near(t, "alpha borrowed", a.BorrowedSlotHours, 0)
	near(t, "alpha lent", a.LentSlotHours, 4)
	near(t, "alpha lent to beta", flowOf(a.LentTo, "beta").SlotHours, 4)
	near(t, "alpha idle", a.IdleSlotHours, 6)
	near(t, "alpha quota charge", a.QuotaCharge, 20)
	near(t, "alpha loan credit", a.LoanCredit, 8)
	near(t, "alpha loan paid", a.LoanPaid, 0)
	near(t, "alpha elastic", a.Elastic, 3)
	near(t, "alpha net", a.Net, 15)
	near(t, "alpha idle cost alone", a.IdleCostAlone, 10)
	near(t, "alpha idle recovered", a.IdleRecovered, 0.8)

	b := teamRow(t, s, "beta")
	near(t, "beta used", b.UsedSlotHours, 12)
	near(t, "beta own", b.OwnSlotHours, 4)
	near(t, "beta on others", b.OthersSlotHours, 4)
	near(t, "beta on common", b.CommonSlotHours, 4)
	near(t, "beta borrowed from alpha", flowOf(b.BorrowedFrom, "alpha").SlotHours, 4)
	near(t, "beta borrowed from common", flowOf(b.BorrowedFrom, "").SlotHours, 4)
	near(t, "beta idle", b.IdleSlotHours, 6)
	near(t, "beta loan paid", b.LoanPaid, 16)
	near(t, "beta net", b.Net, 26)
	near(t, "beta idle recovered", b.IdleRecovered, 0)

	x := teamRow(t, s, "")
	near(t, "no team on common", x.CommonSlotHours, 2)
	near(t, "no team share", x.ShareCost, 0)
	near(t, "no team net", x.Net, 4)

	p := s.Platform
	near(t, "common slot-hours", p.CommonSlotHours, 10)
	near(t, "common cost", p.CommonCost, 10)
	near(t, "common lent", p.CommonLentSlotHours, 6)
	near(t, "common idle", p.CommonIdleSlotHours, 4)
	near(t, "loan receipts", p.LoanReceipts, 12)
	near(t, "elastic idle", p.ElasticIdle, 3)
	near(t, "platform net", p.Net, 1)
}

// TestSettleUsageAndEvenByHand: the quota's 40 split by the 24 fixed
// slot-hours used (alpha 10, beta 12, no team 2), or evenly between the
// two teams with a share; no loans either way.
func TestSettleUsageAndEvenByHand(t *testing.T) {
	s := mustSettle(t, settleLedger(), settleShares, Chargeback{Rule: RuleUsage, LoanPrice: ptr(2)})
	near(t, "usage: alpha", teamRow(t, s, "alpha").Net, 40*10.0/24+3)
	near(t, "usage: beta", teamRow(t, s, "beta").Net, 40*12.0/24)
	near(t, "usage: no team", teamRow(t, s, "").Net, 40*2.0/24)
	near(t, "usage: platform", s.Platform.Net, 3)
	near(t, "usage: beta loan paid", teamRow(t, s, "beta").LoanPaid, 0)
	near(t, "usage: beta still borrowed", teamRow(t, s, "beta").BorrowedSlotHours, 8)
	near(t, "usage: loan price", s.LoanPricePerSlotHour, 0)

	s = mustSettle(t, settleLedger(), settleShares, Chargeback{Rule: RuleEven})
	near(t, "even: alpha", teamRow(t, s, "alpha").Net, 23)
	near(t, "even: beta", teamRow(t, s, "beta").Net, 20)
	near(t, "even: no team", teamRow(t, s, "").Net, 0)
	near(t, "even: platform", s.Platform.Net, 3)
}

// Without any share every fixed slot is common: under the share rule each
// team pays the platform for what it used, at the loan price.
func TestSettleWithoutShares(t *testing.T) {
	s := mustSettle(t, settleLedger(), teamshares.Config{}, Chargeback{})
	near(t, "beta pays its use", teamRow(t, s, "beta").Net, 12)
	near(t, "alpha pays its use and spot", teamRow(t, s, "alpha").Net, 13)
	near(t, "platform keeps the idle", s.Platform.Net, 46-12-13-2)
	s = mustSettle(t, settleLedger(), teamshares.Config{}, Chargeback{Rule: RuleEven})
	near(t, "even with no share: the platform pays the quota", s.Platform.Net, 43)
}

// Attempts sharing a GPU count at their share: two half-GPU attempts of
// beta fill its one-slot share, so nothing is borrowed.
func TestSettleGPUShares(t *testing.T) {
	l := settleLedger()
	l.Usage = []Usage{
		{JobID: "h1", Team: "beta", Pool: "fixed", Slots: 1, Share: 500, Start: at(0), End: at(10 * h)},
		{JobID: "h2", Team: "beta", Pool: "fixed", Slots: 1, Share: 500, Start: at(0), End: at(10 * h)},
		{JobID: "h3", Team: "beta", Pool: "fixed", Slots: 1, Share: 250, Start: at(0), End: at(4 * h)},
	}
	s := mustSettle(t, l, settleShares, Chargeback{})
	b := teamRow(t, s, "beta")
	near(t, "beta own", b.OwnSlotHours, 10)
	near(t, "beta on common", b.CommonSlotHours, 1)
	near(t, "beta loan paid", b.LoanPaid, 1)
}

// An oversized quota: alpha bought 12 of 16 slots and uses 3; beta and
// gamma borrow most of the rest. The loans must pay back at least half of
// what alpha's idle share would have cost it.
func TestSettleOversizedQuotaRecoversIdle(t *testing.T) {
	fixed := policy.Pool{Name: "fixed", Kind: policy.PoolFixed}
	u := func(job, team string, slots int, from, to time.Duration) Usage {
		return Usage{JobID: job, Team: team, Pool: "fixed", Slots: slots, Start: at(from), End: at(to)}
	}
	l := Ledger{
		Pools:  []policy.Pool{fixed},
		Quotas: []Quota{{Pool: "fixed", Slots: 16, PricePerSlotHour: 2.5}},
		Usage: []Usage{
			u("a", "alpha", 3, 0, 24*h),
			u("b", "beta", 8, 0, 20*h),
			u("c", "gamma", 5, 4*h, 20*h),
		},
		From: at(0), Until: at(24 * h),
	}
	sh := teamshares.Config{Teams: []teamshares.Team{
		{Name: "alpha", Slots: 12, LendLimit: 12, BorrowLimit: 16},
		{Name: "beta", Slots: 2, LendLimit: 2, BorrowLimit: 16},
		{Name: "gamma", Slots: 2, LendLimit: 2, BorrowLimit: 16},
	}}
	s := mustSettle(t, l, sh, Chargeback{})
	a := teamRow(t, s, "alpha")
	t.Logf("oversized quota: alpha's share 12 of 16, uses 3; idle cost alone %.2f, loan credit %.2f, recovered %.1f%%; net %.2f of a share cost %.2f",
		a.IdleCostAlone, a.LoanCredit, 100*a.IdleRecovered, a.Net, a.ShareCost)
	// For 4 h beta borrows 6 slots from alpha's 9 idle and gamma's 2, in
	// proportion; then for 16 h beta and gamma borrow all 9 of alpha's.
	lent := 4*6*9/11.0 + 16*9
	near(t, "alpha lent", a.LentSlotHours, lent)
	near(t, "alpha recovered", a.IdleRecovered, lent/(9*24))
	if a.IdleRecovered < 0.5 {
		t.Errorf("alpha recovered %.1f%% of its idle cost, want at least 50%%", 100*a.IdleRecovered)
	}
}

func TestSettleRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		sh   teamshares.Config
		cb   Chargeback
		want string
	}{
		{"rule", settleShares, Chargeback{Rule: "shares"}, `chargeback.rule: "shares" is unknown`},
		{"loan price", settleShares, Chargeback{LoanPrice: ptr(-1)}, "chargeback.loan_price"},
		{"shares past the quota", teamshares.Config{Teams: []teamshares.Team{{Name: "alpha", Slots: 5, LendLimit: 5}}},
			Chargeback{}, "more than the 4 fixed slots"},
	} {
		if _, err := Settle(settleLedger(), tc.sh, tc.cb); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	l := settleLedger()
	l.Until = time.Time{}
	if _, err := Settle(l, settleShares, Chargeback{}); err == nil || !strings.Contains(err.Error(), "ledger.until") {
		t.Errorf("a bad ledger: %v", err)
	}
}

// TestSettleZeroSumProperty settles many random ledgers (3 to 6 teams,
// random shares and limits, whole slots and GPU shares, fixed and elastic
// attempts, a loan price from 0.5 to 3) under every rule, and checks
// that it adds up (mustSettle) and that the result does not depend on the
// order of the ledger's attempts.
func TestSettleZeroSumProperty(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	for seed := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), 33))
		l, sh := randomSettleLedger(rng)
		for _, rule := range Rules() {
			cb := Chargeback{Rule: rule, LoanPrice: ptr(0.5 + 2.5*rng.Float64())}
			t.Run(fmt.Sprintf("seed%d/%s", seed, rule), func(t *testing.T) {
				s := mustSettle(t, l, sh, cb)
				shuffled := l
				shuffled.Usage = append([]Usage(nil), l.Usage...)
				rng.Shuffle(len(shuffled.Usage), func(i, j int) {
					shuffled.Usage[i], shuffled.Usage[j] = shuffled.Usage[j], shuffled.Usage[i]
				})
				again, err := Settle(shuffled, sh, cb)
				if err != nil {
					t.Fatal(err)
				}
				for i := range s.Teams {
					if s.Teams[i].Net != again.Teams[i].Net {
						t.Errorf("team %s: net %v, %v with the attempts shuffled", s.Teams[i].Team, s.Teams[i].Net, again.Teams[i].Net)
					}
				}
			})
		}
	}
}

// randomSettleLedger is a day on a random quota with random teams and
// attempts that fit it, minute by minute.
func randomSettleLedger(rng *rand.Rand) (Ledger, teamshares.Config) {
	quota := 4 + rng.IntN(29)
	var sh teamshares.Config
	left := quota
	teams := 3 + rng.IntN(4)
	for i := range teams {
		slots := rng.IntN(left/2 + 1)
		left -= slots
		sh.Teams = append(sh.Teams, teamshares.Team{Name: fmt.Sprintf("t%d", i), Slots: slots,
			LendLimit: rng.IntN(slots + 1), BorrowLimit: rng.IntN(quota + 1), Weight: 0.5 + rng.Float64()})
	}
	const minutes = 24 * 60
	price := 0.5 + 3*rng.Float64()
	l := Ledger{
		Pools: []policy.Pool{{Name: "fixed", Kind: policy.PoolFixed},
			{Name: "spot", Kind: policy.PoolSpot, PricePerSlotHour: price, Billing: policy.BillingPerMinute, SlotsPerWorker: 1000}},
		Quotas:  []Quota{{Pool: "fixed", Slots: quota, PricePerSlotHour: 0.5 + 2*rng.Float64()}},
		Workers: []WorkerSpan{{ID: "w", Pool: "spot", Start: at(0), End: at(time.Duration(rng.IntN(minutes)+1) * m)}},
		From:    at(0), Until: at(minutes * m),
	}
	// Half the time the quota is two fixed pools at different prices,
	// which the shares divide as one.
	size := map[string]int{"fixed": quota}
	if rng.IntN(2) == 0 {
		second := 1 + rng.IntN(quota-1)
		size["fixed"], size["fixed2"] = quota-second, second
		l.Quotas[0].Slots = quota - second
		l.Pools = append(l.Pools, policy.Pool{Name: "fixed2", Kind: policy.PoolFixed})
		l.Quotas = append(l.Quotas, Quota{Pool: "fixed2", Slots: second, PricePerSlotHour: 0.5 + 2*rng.Float64()})
	}
	occupancy := map[string][]int{"fixed": make([]int, minutes), "fixed2": make([]int, minutes)}
	for j := range 10 + rng.IntN(60) {
		// k == 0: no team; k == teams+1: a team without a share.
		team := ""
		if k := rng.IntN(teams + 2); k > 0 {
			team = fmt.Sprintf("t%d", k-1)
		}
		from := rng.IntN(minutes)
		to := from + 1 + rng.IntN(minutes-from)
		slots, share := 1+rng.IntN(max(quota/3, 1)), 0
		if rng.IntN(4) == 0 {
			slots, share = 1, 1+rng.IntN(999)
		}
		u := Usage{JobID: fmt.Sprintf("j%d", j), Team: team, Pool: "fixed", Slots: slots, Share: share,
			Start: at(time.Duration(from) * m), End: at(time.Duration(to) * m)}
		if rng.IntN(3) == 0 {
			u.Pool = "spot"
			u.End = at(time.Duration(min(to, int(l.Workers[0].End.Sub(t0)/m))) * m)
			if !u.End.After(u.Start) {
				continue
			}
			l.Usage = append(l.Usage, u)
			continue
		}
		if size["fixed2"] > 0 && rng.IntN(2) == 0 {
			u.Pool = "fixed2"
		}
		occupied, limit := occupancy[u.Pool], 1000*size[u.Pool]
		fits := true
		for i := from; i < to; i++ {
			fits = fits && occupied[i]+u.Milli() <= limit
		}
		if !fits {
			continue
		}
		for i := from; i < to; i++ {
			occupied[i] += u.Milli()
		}
		if rng.IntN(5) == 0 {
			u.End = time.Time{} // still running: counted up to Until
			for i := to; i < minutes; i++ {
				if occupied[i]+u.Milli() > limit {
					u.End = at(time.Duration(to) * m)
					break
				}
			}
			if u.End.IsZero() {
				for i := to; i < minutes; i++ {
					occupied[i] += u.Milli()
				}
			}
		}
		l.Usage = append(l.Usage, u)
	}
	return l, sh
}

// The table shows each team's row, the platform, a total that adds up to
// what was paid, and the loans by lender.
func TestSettlementTable(t *testing.T) {
	s := mustSettle(t, settleLedger(), settleShares, Chargeback{LoanPrice: ptr(2)})
	var b strings.Builder
	if err := s.Table(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	fields := func(prefix string) []string {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == prefix {
				return f
			}
		}
		t.Fatalf("no line %q in\n%s", prefix, out)
		return nil
	}
	// TEAM SHARE SHARE-COST USED OWN ON-OTHERS ON-COMMON LENT BORROWED IDLE
	// QUOTA-CHARGE LOAN-PAID LOAN-CREDIT ELASTIC NET IDLE-RECOVERED
	want := map[string][]string{
		"alpha":      {"alpha", "2", "20.00", "10.000", "10.000", "0.000", "0.000", "4.000", "0.000", "6.000", "20.00", "0.00", "8.00", "3.00", "15.00", "80.0%"},
		"beta":       {"beta", "1", "10.00", "12.000", "4.000", "4.000", "4.000", "0.000", "8.000", "6.000", "10.00", "16.00", "0.00", "0.00", "26.00", "0.0%"},
		"-":          {"-", "0", "0.00", "2.000", "0.000", "0.000", "2.000", "0.000", "2.000", "0.000", "0.00", "4.00", "0.00", "0.00", "4.00", "-"},
		"TOTAL":      {"TOTAL", "4", "40.00", "24.000", "14.000", "4.000", "6.000", "10.000", "10.000", "16.000", "40.00", "20.00", "20.00", "6.00", "46.00"},
		"(platform)": {"(platform)", "1", "10.00", "6.000", "4.000", "10.00", "12.00", "3.00", "1.00"},
	}
	for name, w := range want {
		if got := fields(name); strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("row %s:\n got %v\nwant %v", name, got, w)
		}
	}
	for _, loan := range []string{"(common) - 2.000 4.00", "(common) beta 4.000 8.00", "alpha beta 4.000 8.00"} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			found = found || strings.Join(strings.Fields(line), " ") == loan
		}
		if !found {
			t.Errorf("no loan line %q", loan)
		}
	}
}

func ptr(f float64) *float64 { return &f }

// A loan price of 0 lends for free: the share rule then only charges
// each team its share, and the lenders recover nothing.
func TestSettleFreeLoans(t *testing.T) {
	s := mustSettle(t, settleLedger(), settleShares, Chargeback{LoanPrice: ptr(0)})
	near(t, "beta pays its share only", teamRow(t, s, "beta").Net, 10)
	near(t, "alpha recovers nothing", teamRow(t, s, "alpha").IdleRecovered, 0)
	near(t, "platform pays common", s.Platform.Net, 13)
}
