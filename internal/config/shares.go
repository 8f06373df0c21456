package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
)

// SharesConfig divides the fixed quota among teams (issue 33, rule 9 of
// the capacity policy). Without teams it is off and Ballast schedules the
// quota as one pool.
type SharesConfig struct {
	// Teams are the shares, by the team name templates and submissions
	// carry in their team field.
	Teams map[string]TeamShare `yaml:"teams,omitempty"`
	// HalfLife is the half-life of the usage that breaks ties between
	// borrowers (default 24h).
	HalfLife jobs.Duration `yaml:"half_life,omitempty"`
	// Rebalance is preemption between borrowers, off by default.
	Rebalance RebalanceConfig `yaml:"rebalance,omitempty"`
}

// TeamShare is one team's part of the fixed quota.
type TeamShare struct {
	// Slots is the share: fixed slots the team is guaranteed.
	Slots int `yaml:"slots"`
	// LendLimit is how many idle slots of the share others may borrow
	// (default: all of them; 0 lends nothing).
	LendLimit *int `yaml:"lend_limit,omitempty"`
	// BorrowLimit is how many slots above its share the team may hold
	// (default: the whole fixed quota; 0 borrows nothing).
	BorrowLimit *int `yaml:"borrow_limit,omitempty"`
	// Weight orders fair borrowing (default 1): a team of weight 2 may
	// borrow twice what a team of weight 1 does before yielding.
	Weight float64 `yaml:"weight,omitempty"`
	// ReclaimWithin is how long the team may wait for its lent share to
	// come back. Only work whose grace plus a tick fits in it may borrow.
	ReclaimWithin jobs.Duration `yaml:"reclaim_within,omitempty"`
}

// RebalanceConfig is the optional preemption between borrowers.
type RebalanceConfig struct {
	Enabled bool `yaml:"enabled,omitempty"`
	// MinRun is how long a loan runs before rebalancing may stop it
	// (default 10m when enabled).
	MinRun jobs.Duration `yaml:"min_run,omitempty"`
	// DeadZone is how far apart, in borrowed slots per weight, two
	// borrowers must be before one preempts the other (default 1).
	DeadZone float64 `yaml:"dead_zone,omitempty"`
	// MaxPerAttempt is how often rebalancing may preempt one job
	// (default 1).
	MaxPerAttempt int `yaml:"max_per_attempt,omitempty"`
}

// Defaults of the shares section.
const (
	DefaultShareHalfLife     = 24 * time.Hour
	DefaultRebalanceMinRun   = 10 * time.Minute
	DefaultRebalanceDeadZone = 1.0
	DefaultLoanPrice         = 1.0
)

// On reports whether any share is configured.
func (s SharesConfig) On() bool { return len(s.Teams) > 0 }

// withDefaults fills what is unset; quota is the fixed slots, the
// default borrow limit.
func (s SharesConfig) withDefaults(quota int) SharesConfig {
	if !s.On() {
		return s
	}
	setDefault(&s.HalfLife, jobs.Duration(DefaultShareHalfLife))
	if s.Rebalance.Enabled {
		setDefault(&s.Rebalance.MinRun, jobs.Duration(DefaultRebalanceMinRun))
		setDefault(&s.Rebalance.DeadZone, DefaultRebalanceDeadZone)
		setDefault(&s.Rebalance.MaxPerAttempt, 1)
	}
	teams := make(map[string]TeamShare, len(s.Teams))
	for name, t := range s.Teams {
		if t.LendLimit == nil {
			n := t.Slots
			t.LendLimit = &n
		}
		if t.BorrowLimit == nil {
			n := quota
			t.BorrowLimit = &n
		}
		setDefault(&t.Weight, 1)
		teams[name] = t
	}
	s.Teams = teams
	return s
}

// ChargebackConfig is how the cost ledger settles the fixed quota
// between teams with shares.
type ChargebackConfig struct {
	// Rule is share (default: each team pays its share), usage (teams
	// pay what they used, idle split by use) or even (split evenly).
	Rule string `yaml:"rule,omitempty"`
	// LoanPrice is what a borrowed slot-hour costs the borrower, as a
	// multiple of the fixed price per slot-hour (default 1; 0 lends for
	// free).
	LoanPrice *float64 `yaml:"loan_price,omitempty"`
}

// Charge-back rules.
const (
	ChargebackShare = "share"
	ChargebackUsage = "usage"
	ChargebackEven  = "even"
)

// ChargebackTerms is the settlement rule and the loan price as a
// multiple of the fixed price, defaulted whether or not the config was
// (a config built in code may not be). The cost ledger reads it.
func (c Config) ChargebackTerms() (rule string, loanPrice float64) {
	rule, loanPrice = c.Chargeback.Rule, DefaultLoanPrice
	if rule == "" {
		rule = ChargebackShare
	}
	if c.Chargeback.LoanPrice != nil {
		loanPrice = *c.Chargeback.LoanPrice
	}
	return rule, loanPrice
}

// FixedSlots is the fixed quota in slots: the sum of the fixed pools'.
func (c Config) FixedSlots() int {
	n := 0
	for _, s := range c.FixedQuota() {
		n += s
	}
	return n
}

// TeamShares is the shares as the policy, the ledger and the metrics
// count them, in team name order, with the defaults applied.
func (c Config) TeamShares() shares.Config {
	s := c.Shares.withDefaults(c.FixedSlots())
	if !s.On() {
		return shares.Config{}
	}
	out := shares.Config{HalfLife: s.HalfLife.Std(), Rebalance: shares.Rebalance{Enabled: s.Rebalance.Enabled,
		MinRun: s.Rebalance.MinRun.Std(), DeadZone: s.Rebalance.DeadZone, MaxPerAttempt: s.Rebalance.MaxPerAttempt}}
	for _, name := range sortedNames(s.Teams) {
		t := s.Teams[name]
		out.Teams = append(out.Teams, shares.Team{Name: name, Slots: t.Slots, LendLimit: *t.LendLimit,
			BorrowLimit: *t.BorrowLimit, Weight: t.Weight, ReclaimWithin: t.ReclaimWithin.Std()})
	}
	return out
}

// validateShares reports what is wrong with the shares and the
// charge-back settings.
func (c Config) validateShares(ps *problems) {
	switch c.Chargeback.Rule {
	case "", ChargebackShare, ChargebackUsage, ChargebackEven:
	default:
		ps.add("chargeback.rule", "%q is not a rule: write share (each team pays its share), usage or even", c.Chargeback.Rule)
	}
	if p := c.Chargeback.LoanPrice; p != nil && *p < 0 {
		ps.add("chargeback.loan_price", "%v is negative: a multiple of the fixed price per slot-hour, such as 1 (0 lends for free)", *p)
	}
	if !c.Shares.On() {
		return
	}
	quota := c.FixedSlots()
	if quota == 0 {
		ps.add("shares.teams", "shares divide the fixed quota, but no pool of kind fixed has slots: add one, or remove the shares")
	}
	for _, name := range sortedNames(c.Shares.Teams) {
		if c.Shares.Teams[name].ReclaimWithin == 0 {
			ps.add("shares.teams."+name+".reclaim_within", "missing: how long the team may wait for its lent share to come back, at least two controller ticks (for example 2m)")
		}
	}
	err := c.TeamShares().Validate(quota, c.Controller.Tick.Std())
	if se, ok := err.(*shares.Error); ok {
		for _, p := range se.Problems {
			field, msg, found := strings.Cut(p, ": ")
			if !found {
				field, msg = "shares", p
			}
			if strings.HasSuffix(field, ".reclaim_within") && c.Shares.Teams[strings.TrimSuffix(strings.TrimPrefix(field, "shares.teams."), ".reclaim_within")].ReclaimWithin == 0 {
				continue // said as missing above
			}
			ps.add(field, "%s", msg)
		}
	}
}

// sharesWarnings are the shares' consequences for templates that are not
// wrong but likely unintended: a team with no share (it owns no slot and
// only borrows), and core templates of a team with a share that can
// never borrow (they are not reclaimable, so they run only in the
// team's share).
func (c Config) sharesWarnings() []*jobs.FieldError {
	if !c.Shares.On() {
		return nil
	}
	var out []*jobs.FieldError
	sc := c.TeamShares()
	strictest := time.Duration(0)
	for _, t := range sc.Teams {
		if strictest == 0 || t.ReclaimWithin < strictest {
			strictest = t.ReclaimWithin
		}
	}
	tick := c.Controller.Tick.Std()
	for _, name := range sortedNames(c.Templates) {
		t := c.Templates[name].WithDefaults()
		field := "templates." + name + ".team"
		if t.Team == "" {
			if t.Class == jobs.ClassCore {
				out = append(out, &jobs.FieldError{Field: "templates." + name, Message: "names no team while shares are on: its core jobs own no share and run only on common or lent slots, if reclaimable; set team"})
			}
			continue
		}
		if _, ok := sc.Team(t.Team); !ok {
			out = append(out, &jobs.FieldError{Field: field, Message: fmt.Sprintf("team %q has no share (shares.teams has %s): its core jobs own no slot and run only on common or lent slots, if reclaimable", t.Team, strings.Join(sortedNames(c.Shares.Teams), ", "))})
			continue
		}
		if t.Class != jobs.ClassCore {
			continue
		}
		grace := t.Grace.Std()
		var why string
		switch {
		case !t.Checkpointable || !t.Retryable:
			why = "it is not both checkpointable and retryable"
		case grace+tick > strictest:
			why = fmt.Sprintf("its grace (%s) plus a tick (%s) exceeds the strictest reclaim_within (%s)", grace, tick, strictest)
		}
		if why != "" {
			out = append(out, &jobs.FieldError{Field: "templates." + name, Message: fmt.Sprintf("a core template of team %q that can never borrow: %s, so its jobs run only within the team's share and wait when it is full", t.Team, why)})
		}
	}
	return out
}
