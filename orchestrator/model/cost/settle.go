package cost

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ballastdev/ballast/internal/timespan"
	teamshares "github.com/ballastdev/ballast/orchestrator/model/shares"
)

// The charge-back rules Settle knows; see the package documentation.
const (
	RuleShare = "share"
	RuleUsage = "usage"
	RuleEven  = "even"
)

// Rules lists the charge-back rules, the default first.
func Rules() []string { return []string{RuleShare, RuleUsage, RuleEven} }

// Chargeback says how the quota's cost is settled between teams.
type Chargeback struct {
	// Rule is RuleShare (the default when empty), RuleUsage or RuleEven.
	Rule string `json:"rule"`
	// LoanPrice multiplies the fixed price per slot-hour to price a
	// borrowed slot-hour under RuleShare; nil means 1, and 0 lends for
	// free (the config tells the two apart the same way).
	LoanPrice *float64 `json:"loan_price,omitempty"`
}

// rule is Rule with its default filled in.
func (c Chargeback) rule() string { return cmp.Or(c.Rule, RuleShare) }

// loanPrice is LoanPrice with its default filled in.
func (c Chargeback) loanPrice() float64 {
	if c.LoanPrice == nil {
		return 1
	}
	return *c.LoanPrice
}

// Settlement is who owes what for the window: a row per team and one for
// the platform, whose nets add up to Total.
type Settlement struct {
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// Rule and LoanPrice are the charge-back applied, defaults filled in.
	Rule      string  `json:"rule"`
	LoanPrice float64 `json:"loan_price"`
	// FixedPrice is the quotas' cost per slot-hour and
	// LoanPricePerSlotHour what a borrowed slot-hour costs the borrower
	// (zero under the rules without loans).
	FixedPrice           float64 `json:"fixed_price_per_slot_hour"`
	LoanPricePerSlotHour float64 `json:"loan_price_per_slot_hour"`
	// Quota is the fixed slots and Common the part no share covers.
	Quota  int `json:"quota"`
	Common int `json:"common"`
	// Teams has a row per team with a share or with attempts in the
	// window, by name; jobs without a team are the row named "".
	Teams    []TeamSettlement   `json:"teams"`
	Platform PlatformSettlement `json:"platform"`
	// Total is what was paid: the quotas plus the elastic workers billed.
	// The teams' nets and the platform's add up to it.
	Total float64 `json:"total"`
}

// TeamSettlement is one team's slot time on the fixed quota and its bill.
type TeamSettlement struct {
	Team string `json:"team"`
	// Share is the team's share in slots (0 for a team without one), and
	// ShareSlotHours and ShareCost that share over the window.
	Share          int     `json:"share"`
	ShareSlotHours float64 `json:"share_slot_hours"`
	ShareCost      float64 `json:"share_cost"`
	// OwnSlotHours, OthersSlotHours and CommonSlotHours are the fixed slot
	// time the team used within its share, on other teams' shares and on
	// common slots; UsedSlotHours is their sum.
	UsedSlotHours   float64 `json:"used_slot_hours"`
	OwnSlotHours    float64 `json:"own_slot_hours"`
	OthersSlotHours float64 `json:"others_slot_hours"`
	CommonSlotHours float64 `json:"common_slot_hours"`
	// LentSlotHours is the team's share others used and
	// BorrowedSlotHours what it used above its share
	// (OthersSlotHours + CommonSlotHours); LentTo and BorrowedFrom break
	// them down by team, common being "".
	LentSlotHours     float64 `json:"lent_slot_hours"`
	BorrowedSlotHours float64 `json:"borrowed_slot_hours"`
	LentTo            []Flow  `json:"lent_to"`
	BorrowedFrom      []Flow  `json:"borrowed_from"`
	// IdleSlotHours is the team's share nobody used.
	IdleSlotHours float64 `json:"idle_slot_hours"`
	// QuotaCharge is what the rule charges the team for the quota: its
	// ShareCost under RuleShare, its part by use or evenly otherwise.
	QuotaCharge float64 `json:"quota_charge"`
	// LoanPaid is what the team paid for the slot-hours it borrowed and
	// LoanCredit what it was paid for those it lent.
	LoanPaid   float64 `json:"loan_paid"`
	LoanCredit float64 `json:"loan_credit"`
	// Elastic is what the team's attempts on elastic pools were charged.
	Elastic float64 `json:"elastic"`
	// Net is what the team owes: QuotaCharge + LoanPaid - LoanCredit +
	// Elastic.
	Net float64 `json:"net"`
	// IdleCostAlone is what the share's idle time would have cost had no
	// one borrowed it ((ShareSlotHours - OwnSlotHours) at the fixed
	// price), and IdleRecovered the part of it LoanCredit paid back.
	IdleCostAlone float64 `json:"idle_cost_alone"`
	IdleRecovered float64 `json:"idle_recovered"`
}

// Flow is slot time lent to or borrowed from one team ("" is common) and
// its price.
type Flow struct {
	Team      string  `json:"team"`
	SlotHours float64 `json:"slot_hours"`
	Cost      float64 `json:"cost"`
}

// PlatformSettlement is what no team pays.
type PlatformSettlement struct {
	// CommonSlotHours and CommonCost are the common slots over the
	// window; CommonLentSlotHours the part teams borrowed and
	// CommonIdleSlotHours the rest.
	CommonSlotHours     float64 `json:"common_slot_hours"`
	CommonCost          float64 `json:"common_cost"`
	CommonLentSlotHours float64 `json:"common_lent_slot_hours"`
	CommonIdleSlotHours float64 `json:"common_idle_slot_hours"`
	// QuotaCharge is the quota's cost no team was charged: CommonCost
	// under RuleShare; under RuleUsage and RuleEven what the rule could
	// not charge (nothing used, or no share), usually zero.
	QuotaCharge float64 `json:"quota_charge"`
	// LoanReceipts is what borrowers paid for common slots.
	LoanReceipts float64 `json:"loan_receipts"`
	// ElasticIdle is the elastic cost charged to no attempt.
	ElasticIdle float64 `json:"elastic_idle"`
	// Net is QuotaCharge - LoanReceipts + ElasticIdle.
	Net float64 `json:"net"`
}

// Sum is the teams' nets plus the platform's: Total, up to rounding.
func (s Settlement) Sum() float64 {
	sum := s.Platform.Net
	for _, t := range s.Teams {
		sum += t.Net
	}
	return sum
}

// Settle prices the ledger (as Compute does) and settles the window
// between the teams of sh under cb. The error, a *jobs.ValidationError,
// names every bad entry of the ledger, or what to fix in sh and cb.
func Settle(l Ledger, sh teamshares.Config, cb Chargeback) (Settlement, error) {
	b, err := check(l)
	if err != nil {
		return Settlement{}, err
	}
	r := b.report()
	var p problems
	if !slices.Contains(Rules(), cb.rule()) {
		p.add("chargeback.rule", "%q is unknown (use %s, %s or %s)", cb.Rule, RuleShare, RuleUsage, RuleEven)
	}
	if cb.loanPrice() < 0 {
		p.add("chargeback.loan_price", "is %v; write a multiple of the fixed price per slot-hour, such as 1 (0 lends for free)", cb.loanPrice())
	}
	if err := sh.Validate(r.Fixed.Slots, 0); err != nil {
		for _, msg := range err.(*teamshares.Error).Problems {
			// The shares name the field ("shares.teams.a.slots: ...").
			field, text, ok := strings.Cut(msg, ": ")
			if !ok {
				field, text = "shares", msg
			}
			p.add(field, "%s", text)
		}
	}
	if err := p.err(); err != nil {
		return Settlement{}, err
	}
	s := Settlement{From: b.from, Until: b.until, Rule: cb.rule(), LoanPrice: cb.loanPrice(),
		FixedPrice: r.Fixed.PricePerSlotHour, Quota: r.Fixed.Slots, Common: max(r.Fixed.Slots-sh.Total(), 0),
		Total: r.Total.PaidCost}
	rows := b.sweep(sh, s.Quota)
	b.elastic(rows, sh)
	s.settle(rows, sh, r)
	return s, nil
}

// teamTally is a team's row while the sweep adds to it.
type teamTally struct {
	TeamSettlement
	lent, borrowed map[string]float64
	// levels is the hours the team held each level of fixed usage, in
	// thousandths of a slot (FixedUse).
	levels map[int]float64
}

func tallyOf(rows map[string]*teamTally, name string) *teamTally {
	t := rows[name]
	if t == nil {
		t = &teamTally{TeamSettlement: TeamSettlement{Team: name}, lent: map[string]float64{}, borrowed: map[string]float64{},
			levels: map[int]float64{}}
		rows[name] = t
	}
	return t
}

// fixedUse is a change in a team's fixed usage at an instant, in
// thousandths of a slot so attempts sharing a GPU add up exactly.
type fixedUse struct {
	at    time.Time
	team  string
	milli int
}

// sweep walks the window from change to change of the teams' fixed
// usage and adds, for each span between changes, what shares.Config.Split
// says of it. The common row ("" in lent) gathers loans of common slots;
// it is kept apart from the team named "" (jobs without a team) by
// living in its own tally.
func (b *book) sweep(sh teamshares.Config, quota int) map[string]*teamTally {
	rows := map[string]*teamTally{}
	for _, t := range sh.Teams {
		tallyOf(rows, t.Name).Share = t.Slots
	}
	var changes []fixedUse
	for _, a := range b.attempts {
		if a.pool.Kind.Elastic() {
			continue
		}
		s, e, ok := clip(a.u.Start, a.end, b.from, b.until)
		if !ok {
			continue
		}
		tallyOf(rows, a.u.Team)
		changes = append(changes, fixedUse{s, a.u.Team, a.u.Milli()}, fixedUse{e, a.u.Team, -a.u.Milli()})
	}
	slices.SortFunc(changes, func(x, y fixedUse) int { return x.at.Compare(y.at) })
	common := tallyOf(map[string]*teamTally{}, "")
	used := map[string]int{}
	at := b.from
	for i := 0; ; {
		next := b.until
		if i < len(changes) {
			next = timespan.Earlier(changes[i].at, b.until)
		}
		if hours := next.Sub(at).Hours(); hours > 0 {
			addSplit(rows, common, sh, quota, used, hours)
		}
		at = next
		if i >= len(changes) {
			break
		}
		// Every change at one instant is applied before the next span.
		for t := changes[i].at; i < len(changes) && changes[i].at.Equal(t); i++ {
			used[changes[i].team] += changes[i].milli
		}
	}
	rows[commonKey] = common
	return rows
}

// commonKey files the common slots' tally among the teams' for settle;
// no team name can start with a NUL.
const commonKey = "\x00common"

// addSplit adds hours of the split of used to the rows.
func addSplit(rows map[string]*teamTally, common *teamTally, sh teamshares.Config, quota int, used map[string]int, hours float64) {
	u := make(map[string]float64, len(used))
	for name, milli := range used {
		if milli > 0 {
			u[name] = float64(milli) / 1000
		}
	}
	sp := sh.Split(quota, u)
	// Walk teams in name order so the float sums, and the settlement, do
	// not depend on map order.
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		t := rows[name]
		t.OwnSlotHours += sp.Own[name] * hours
		t.IdleSlotHours += sp.Idle[name] * hours
		t.levels[max(used[name], 0)] += hours
	}
	common.IdleSlotHours += sp.CommonIdle * hours
	for _, l := range sp.Loans {
		sh := l.Slots * hours
		br := rows[l.Borrower]
		br.borrowed[l.Lender] += sh
		if l.Lender == "" {
			br.CommonSlotHours += sh
			common.lent[l.Borrower] += sh
		} else {
			br.OthersSlotHours += sh
			rows[l.Lender].lent[l.Borrower] += sh
		}
	}
}

// elastic adds each team's elastic charge: its attempts' slot-hours on
// elastic pools at their price, as Compute charges them.
func (b *book) elastic(rows map[string]*teamTally, sh teamshares.Config) {
	as := slices.Clone(b.attempts)
	slices.SortFunc(as, func(x, y attempt) int {
		return cmp.Or(x.u.Start.Compare(y.u.Start), x.end.Compare(y.end), cmp.Compare(x.u.JobID, y.u.JobID), cmp.Compare(x.idx, y.idx))
	})
	for _, a := range as {
		if !a.pool.Kind.Elastic() {
			continue
		}
		if s, e, ok := clip(a.u.Start, a.end, b.from, b.until); ok {
			tallyOf(rows, a.u.Team).Elastic += a.u.gpus() * e.Sub(s).Hours() * a.pool.PricePerSlotHour
		}
	}
}

// settle turns the slot-hours into money under the rule and fills s's
// rows.
func (s *Settlement) settle(rows map[string]*teamTally, sh teamshares.Config, r Report) {
	common := rows[commonKey]
	delete(rows, commonKey)
	hours := s.Until.Sub(s.From).Hours()
	quotaCost := r.Fixed.PaidCost
	// A share's cost is its part of what the quotas were paid, so the
	// shares and common add up to that exactly (up to rounding).
	part := func(slots int) float64 {
		if s.Quota == 0 {
			return 0
		}
		return quotaCost * float64(slots) / float64(s.Quota)
	}
	names := slices.Sorted(maps.Keys(rows))
	var used float64
	withShare := 0
	for _, name := range names {
		t := rows[name]
		t.UsedSlotHours = t.OwnSlotHours + t.OthersSlotHours + t.CommonSlotHours
		t.BorrowedSlotHours = t.OthersSlotHours + t.CommonSlotHours
		t.ShareSlotHours = float64(t.Share) * hours
		t.ShareCost = part(t.Share)
		t.IdleCostAlone = (t.ShareSlotHours - t.OwnSlotHours) * s.FixedPrice
		used += t.UsedSlotHours
		if t.Share > 0 {
			withShare++
		}
	}
	pl := &s.Platform
	pl.CommonSlotHours = float64(s.Common) * hours
	pl.CommonCost = part(s.Common)
	pl.CommonIdleSlotHours = common.IdleSlotHours
	var allocated, elastic float64
	loan := 0.0
	if s.Rule == RuleShare {
		loan = s.LoanPrice * s.FixedPrice
		s.LoanPricePerSlotHour = loan
	}
	for _, name := range names {
		t := rows[name]
		switch s.Rule {
		case RuleShare:
			t.QuotaCharge = t.ShareCost
		case RuleUsage:
			if used > 0 {
				t.QuotaCharge = quotaCost * t.UsedSlotHours / used
			}
		case RuleEven:
			if t.Share > 0 {
				t.QuotaCharge = quotaCost / float64(withShare)
			}
		}
		allocated += t.QuotaCharge
		t.LentTo = flows(t.lent, loan)
		t.BorrowedFrom = flows(t.borrowed, loan)
		t.LentSlotHours = sumFlows(t.LentTo, func(f Flow) float64 { return f.SlotHours })
		t.LoanCredit = sumFlows(t.LentTo, func(f Flow) float64 { return f.Cost })
		t.LoanPaid = sumFlows(t.BorrowedFrom, func(f Flow) float64 { return f.Cost })
		if t.IdleCostAlone > 0 {
			t.IdleRecovered = t.LoanCredit / t.IdleCostAlone
		}
		t.Net = t.QuotaCharge + t.LoanPaid - t.LoanCredit + t.Elastic
		elastic += t.Elastic
		s.Teams = append(s.Teams, t.TeamSettlement)
	}
	for _, f := range flows(common.lent, loan) {
		pl.CommonLentSlotHours += f.SlotHours
		pl.LoanReceipts += f.Cost
	}
	pl.ElasticIdle = r.Total.ElasticCost - elastic
	// Under the share rule the shares' and common's parts of the quota
	// cost add up to it, and the platform pays common's; under the others
	// it pays what the teams were not charged. Either way it keeps the
	// rounding left over, so the nets add up to what was paid.
	pl.QuotaCharge = quotaCost - allocated
	pl.Net = pl.QuotaCharge - pl.LoanReceipts + pl.ElasticIdle
}

// flows lists slot-hours by team, priced at price per slot-hour, by name
// (common, "", first).
func flows(m map[string]float64, price float64) []Flow {
	out := make([]Flow, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, Flow{Team: name, SlotHours: m[name], Cost: m[name] * price})
	}
	return out
}

func sumFlows(fs []Flow, v func(Flow) float64) float64 {
	sum := 0.0
	for _, f := range fs {
		sum += v(f)
	}
	return sum
}
