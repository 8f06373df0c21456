package shares

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Team is one team's part of the fixed quota.
type Team struct {
	Name string
	// Slots is the share: fixed slots the team is guaranteed.
	Slots int
	// LendLimit is how many of the share's slots other teams may use
	// while the team leaves them idle; 0 lends nothing. The config
	// loader defaults it to Slots.
	LendLimit int
	// BorrowLimit is how many slots above its share the team's
	// reclaimable work may hold; 0 borrows nothing. The config loader
	// defaults it to the whole quota.
	BorrowLimit int
	// Weight orders fair borrowing: borrowed slots over weight, lowest
	// first. Zero counts as 1.
	Weight float64
	// ReclaimWithin is how long the team may wait for its share back once
	// in-share work of its is queued and the share is lent: work borrows
	// only if its grace plus a tick fits in it.
	ReclaimWithin time.Duration
}

// weight is Weight, 1 when unset.
func (t Team) weight() float64 {
	if t.Weight > 0 {
		return t.Weight
	}
	return 1
}

// Rebalance is the optional preemption between borrowers.
type Rebalance struct {
	// Enabled turns it on; off by default.
	Enabled bool
	// MinRun is how long a loan runs before rebalancing may stop it.
	MinRun time.Duration
	// DeadZone is how far apart (in borrowed slots over weight) two
	// borrowers must be before one preempts the other.
	DeadZone float64
	// MaxPerAttempt is how many times one job may be preempted by
	// rebalancing.
	MaxPerAttempt int
}

// Config is the shares of one fixed quota. The zero value has no teams:
// shares are off and Ballast schedules as one pool.
type Config struct {
	Teams []Team
	// HalfLife is the half-life of the decayed usage that breaks ties
	// between borrowers; zero means 24h.
	HalfLife  time.Duration
	Rebalance Rebalance
}

// On reports whether any share is configured.
func (c Config) On() bool { return len(c.Teams) > 0 }

// Team returns the named team's share; ok is false for a team with none
// (it owns no slot and borrows only what is common or lent).
func (c Config) Team(name string) (Team, bool) {
	for _, t := range c.Teams {
		if t.Name == name {
			return t, true
		}
	}
	return Team{Name: name}, false
}

func (c Config) has(name string) bool {
	_, ok := c.Team(name)
	return ok
}

// Total is the slots the shares cover.
func (c Config) Total() int {
	n := 0
	for _, t := range c.Teams {
		n += t.Slots
	}
	return n
}

// Validate checks the shares against a quota of quota slots and the
// controller's tick, naming every problem at once.
func (c Config) Validate(quota int, tick time.Duration) error {
	var errs []string
	seen := map[string]bool{}
	for _, t := range c.Teams {
		at := "shares.teams." + t.Name
		switch {
		case t.Name == "":
			errs = append(errs, "shares.teams: a team has no name")
		case seen[t.Name]:
			errs = append(errs, at+": named twice")
		}
		seen[t.Name] = true
		if t.Slots < 0 {
			errs = append(errs, fmt.Sprintf("%s.slots: is %d; a share cannot be negative", at, t.Slots))
		}
		if t.LendLimit < 0 || t.LendLimit > t.Slots {
			errs = append(errs, fmt.Sprintf("%s.lend_limit: is %d; write 0 to %d (the share)", at, t.LendLimit, t.Slots))
		}
		if t.BorrowLimit < 0 || (quota > 0 && t.BorrowLimit > quota) {
			errs = append(errs, fmt.Sprintf("%s.borrow_limit: is %d; write 0 to %d (the quota)", at, t.BorrowLimit, quota))
		}
		if t.Weight < 0 {
			errs = append(errs, fmt.Sprintf("%s.weight: is %v; write a positive number (1 when unset)", at, t.Weight))
		}
		if t.ReclaimWithin < 2*tick {
			errs = append(errs, fmt.Sprintf("%s.reclaim_within: is %v; it must be at least two controller ticks (%v)", at, t.ReclaimWithin, 2*tick))
		}
	}
	if quota > 0 && c.Total() > quota {
		errs = append(errs, fmt.Sprintf("shares.teams: the shares add up to %d slots, more than the %d fixed slots", c.Total(), quota))
	}
	if c.HalfLife < 0 {
		errs = append(errs, "shares.half_life: cannot be negative")
	}
	if r := c.Rebalance; r.Enabled && (r.MinRun < 0 || r.DeadZone < 0 || r.MaxPerAttempt < 1) {
		errs = append(errs, "shares.rebalance: min_run and dead_zone must not be negative and max_per_attempt at least 1")
	}
	if len(errs) == 0 {
		return nil
	}
	return &Error{Problems: errs}
}

// Error lists a config's problems.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems with the shares: %s", len(e.Problems), strings.Join(e.Problems, "; "))
}

// Loan is slots one team holds on another's share, or on common slots
// (Lender ""), at one instant.
type Loan struct {
	Borrower, Lender string
	Slots            float64
}

// Split is who uses whose slots at one instant.
type Split struct {
	// Own is, per team, the slots it uses within its share.
	Own map[string]float64
	// Loans lists borrowed slots by borrower and lender, in borrower then
	// lender order, common ("") first.
	Loans []Loan
	// Idle is, per team with a share, the share's slots nobody uses.
	Idle map[string]float64
	// CommonIdle is the common slots nobody uses.
	CommonIdle float64
}

// Split attributes the slots each team uses on a quota of quota slots
// (see the package documentation). A team not in the config owns
// nothing, so all it uses is borrowed. Use beyond what is lendable
// (a limit passed while a reclaim is under way) is still attributed,
// to the lenders' idle share past their lend limits, then to what is
// left in proportion to the shares, so the split always accounts for
// every slot used.
func (c Config) Split(quota int, used map[string]float64) Split {
	s := Split{Own: map[string]float64{}, Idle: map[string]float64{}}
	over := map[string]float64{}
	lendable := map[string]float64{}
	pastLimit := map[string]float64{}
	var borrowed float64
	for _, t := range c.Teams {
		u := max(used[t.Name], 0)
		own := min(u, float64(t.Slots))
		s.Own[t.Name] = own
		if u > own {
			over[t.Name] = u - own
			borrowed += u - own
		}
		idle := float64(t.Slots) - own
		lendable[t.Name] = min(idle, float64(t.LendLimit))
		pastLimit[t.Name] = idle - lendable[t.Name]
	}
	// In name order, for the same reason as the tiers' sums below.
	for _, name := range slices.Sorted(maps.Keys(used)) {
		if u := used[name]; !c.has(name) && u > 0 {
			over[name] = u
			borrowed += u
		}
	}
	common := max(float64(quota-c.Total()), 0)
	fromCommon := min(borrowed, common)
	s.CommonIdle = common - fromCommon
	rest := borrowed - fromCommon
	// Take the rest from the lenders' lendable idle, then past their
	// limits, in proportion within each tier.
	take := map[string]float64{}
	for _, tier := range []map[string]float64{lendable, pastLimit} {
		if rest <= 0 {
			break
		}
		// Summed in the config's order: a sum in map order could differ
		// in its last bits from call to call, and so would the split.
		var sum float64
		for _, t := range c.Teams {
			sum += tier[t.Name]
		}
		if sum <= 0 {
			continue
		}
		n := min(rest, sum)
		for name, v := range tier {
			take[name] += n * v / sum
		}
		rest -= n
	}
	for _, t := range c.Teams {
		s.Idle[t.Name] = float64(t.Slots) - s.Own[t.Name] - take[t.Name]
	}
	borrowers := slices.Sorted(maps.Keys(over))
	lenders := slices.Sorted(maps.Keys(take))
	for _, b := range borrowers {
		f := over[b] / borrowed
		if fromCommon > 0 {
			s.Loans = append(s.Loans, Loan{Borrower: b, Lender: "", Slots: fromCommon * f})
		}
		for _, l := range lenders {
			if take[l] > 0 {
				s.Loans = append(s.Loans, Loan{Borrower: b, Lender: l, Slots: take[l] * f})
			}
		}
	}
	// rest > 0 only when used passes the quota: the caller's data is
	// inconsistent, and the excess stays unattributed rather than
	// invented.
	return s
}

// Borrowed is, per team, the slots it uses above its share.
func (s Split) Borrowed() map[string]float64 {
	out := map[string]float64{}
	for _, l := range s.Loans {
		out[l.Borrower] += l.Slots
	}
	return out
}

// Lent is, per lender (common as ""), the slots others use of it.
func (s Split) Lent() map[string]float64 {
	out := map[string]float64{}
	for _, l := range s.Loans {
		out[l.Lender] += l.Slots
	}
	return out
}

// FairOrder sorts borrowing teams for idle lendable slots: lowest
// borrowed slots over weight first, then lowest decayed usage, then name.
func (c Config) FairOrder(teams []string, borrowed map[string]float64, decayed map[string]float64) {
	slices.SortStableFunc(teams, func(a, b string) int {
		ta, _ := c.Team(a)
		tb, _ := c.Team(b)
		return cmp.Or(cmp.Compare(borrowed[a]/ta.weight(), borrowed[b]/tb.weight()),
			cmp.Compare(decayed[a], decayed[b]), cmp.Compare(a, b))
	})
}
