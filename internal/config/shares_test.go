package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const sharesDoc = `
pools:
  fixed: {kind: fixed, slots: 8}
controller: {tick: 2s}
shares:
  teams:
    a: {slots: 4, reclaim_within: 2m}
    b: {slots: 2, lend_limit: 1, borrow_limit: 3, weight: 2, reclaim_within: 90s}
  rebalance: {enabled: true}
chargeback: {rule: usage, loan_price: 0.5}
`

func TestSharesReachThePolicyWithDefaults(t *testing.T) {
	cfg, err := Parse([]byte(sharesDoc), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pc := cfg.PolicyConfig()
	sc := pc.Shares
	if !sc.On() || len(sc.Teams) != 2 || pc.Tick != 2*time.Second {
		t.Fatalf("shares %+v tick %v", sc, pc.Tick)
	}
	a, b := sc.Teams[0], sc.Teams[1]
	// a leaves every limit and the weight unset: lend all of its share,
	// borrow up to the quota, weight 1.
	if a.Name != "a" || a.Slots != 4 || a.LendLimit != 4 || a.BorrowLimit != 8 || a.Weight != 1 || a.ReclaimWithin != 2*time.Minute {
		t.Errorf("team a %+v", a)
	}
	if b.Name != "b" || b.LendLimit != 1 || b.BorrowLimit != 3 || b.Weight != 2 || b.ReclaimWithin != 90*time.Second {
		t.Errorf("team b %+v", b)
	}
	if sc.HalfLife != DefaultShareHalfLife || !sc.Rebalance.Enabled || sc.Rebalance.MaxPerAttempt != 1 ||
		sc.Rebalance.MinRun != DefaultRebalanceMinRun || sc.Rebalance.DeadZone != DefaultRebalanceDeadZone {
		t.Errorf("half-life and rebalance %+v", sc)
	}
	if rule, price := cfg.ChargebackTerms(); rule != ChargebackUsage || price != 0.5 {
		t.Errorf("charge-back terms %q %v", rule, price)
	}
	// Explicit zeros stay zeros: lend nothing, borrow nothing, free loans.
	cfg, err = Parse([]byte(`
pools: {fixed: {kind: fixed, slots: 2}}
shares: {teams: {a: {slots: 2, lend_limit: 0, borrow_limit: 0, reclaim_within: 1m}}}
chargeback: {loan_price: 0}
`), "zero.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.PolicyConfig().Shares.Teams[0]; a.LendLimit != 0 || a.BorrowLimit != 0 {
		t.Errorf("explicit zero limits became %+v", a)
	}
	if rule, price := cfg.ChargebackTerms(); rule != ChargebackShare || price != 0 {
		t.Errorf("default rule and free loans: %q %v", rule, price)
	}
}

func TestNoSharesIsOff(t *testing.T) {
	cfg, err := Parse([]byte(fixedPool), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if pc := cfg.PolicyConfig(); pc.Shares.On() {
		t.Fatalf("shares on without a shares section: %+v", pc.Shares)
	}
	if rule, price := (Config{}).ChargebackTerms(); rule != ChargebackShare || price != DefaultLoanPrice {
		t.Errorf("terms of an empty config: %q %v", rule, price)
	}
}

func TestSharesProblemsNameTheField(t *testing.T) {
	_, err := Parse([]byte(`
pools:
  fixed: {kind: fixed, slots: 4}
controller: {tick: 1s}
shares:
  teams:
    a: {slots: 3, lend_limit: 4, reclaim_within: 1s}
    b: {slots: 2, borrow_limit: 9}
chargeback: {rule: fair, loan_price: -1}
`), "bad.yaml")
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("want Problems, got %v", err)
	}
	want := map[string]string{
		"shares.teams":                  "add up to 5 slots, more than the 4",
		"shares.teams.a.lend_limit":     "write 0 to 3",
		"shares.teams.a.reclaim_within": "at least two controller ticks",
		"shares.teams.b.borrow_limit":   "write 0 to 4",
		"shares.teams.b.reclaim_within": "missing",
		"chargeback.rule":               `"fair" is not a rule`,
		"chargeback.loan_price":         "negative",
	}
	for field, frag := range want {
		found := false
		for _, p := range ps {
			if p.Field == field && strings.Contains(p.Message, frag) {
				found = true
				if p.Line == 0 {
					t.Errorf("%s: no line in %v", field, p)
				}
			}
		}
		if !found {
			t.Errorf("no problem at %s saying %q in\n%v", field, frag, err)
		}
	}
	_, err = Parse([]byte("shares: {teams: {a: {slots: 1, reclaim_within: 1m}}}\n"), "nofixed.yaml")
	if err == nil || !strings.Contains(err.Error(), "no pool of kind fixed") {
		t.Errorf("shares without a fixed pool: %v", err)
	}
}

func TestCheckWarnsAboutTeamsWithoutShareAndCoreThatCannotBorrow(t *testing.T) {
	doc := `
worker: {run_as: nobody}
pools: {fixed: {kind: fixed, slots: 4}}
shares: {teams: {a: {slots: 2, reclaim_within: 1m}, b: {slots: 2, reclaim_within: 5m}}}
templates:
  train: {command: [x], class: core, team: a, checkpointable: true, retryable: true, grace: 20s}
  report: {command: [x], class: core, team: a}
  slow: {command: [x], class: core, team: b, checkpointable: true, retryable: true, grace: 2m}
  stray: {command: [x], class: core, team: c}
  sweep: {command: [x], class: burst, team: b}
`
	ws, err := checkFile(t, doc, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if !warningAt(ws, "templates.stray.team", `team "c" has no share`) {
		t.Errorf("team without a share: no warning in\n%v", ws)
	}
	if !warningAt(ws, "templates.report", "not both checkpointable and retryable") {
		t.Errorf("core template that is not reclaimable: no warning in\n%v", ws)
	}
	// 2m of grace plus a tick passes a's 1m, the strictest promise.
	if !warningAt(ws, "templates.slow", "exceeds the strictest reclaim_within (1m0s)") {
		t.Errorf("core template whose grace is too long: no warning in\n%v", ws)
	}
	for _, w := range ws {
		if strings.HasPrefix(w.Field, "templates.train") || strings.HasPrefix(w.Field, "templates.sweep") {
			t.Errorf("warned about a template that may borrow or is burst: %v", w)
		}
	}
	ws, err = checkFile(t, "worker: {run_as: nobody}\n"+fixedPool+"templates:\n  report: {command: [x], class: core, team: a}\n", 0o600)
	if err != nil || len(ws) != 0 {
		t.Errorf("without shares: %v %v, want no warning", ws, err)
	}
}

func TestFixedSlotsAddsTheFixedPools(t *testing.T) {
	c := Config{Pools: map[string]PoolConfig{"f1": {Kind: PoolFixed, Slots: 3}, "f2": {Kind: PoolFixed, Slots: 2},
		"spot": {Kind: PoolSpot, MaxWorkers: 9}}}
	if n := c.FixedSlots(); n != 5 {
		t.Errorf("fixed slots %d, want 5", n)
	}
}
