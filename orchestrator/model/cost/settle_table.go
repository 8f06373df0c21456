package cost

import (
	"fmt"
	"io"
	"strconv"
)

// Table writes the settlement as aligned text: a row per team, the
// platform and the total, then the loans by lender and borrower. Slot
// time is in hours, money in the pools' currency.
func (s Settlement) Table(w io.Writer) error {
	var t table
	t.left = 1
	t.add("TEAM", "SHARE", "SHARE-COST", "USED-SLOT-H", "OWN", "ON-OTHERS", "ON-COMMON", "LENT", "BORROWED", "IDLE",
		"QUOTA-CHARGE", "LOAN-PAID", "LOAN-CREDIT", "ELASTIC", "NET", "IDLE-RECOVERED")
	var used, own, others, common, lent, borrowed, idle, charge, paid, credit, elastic float64
	for _, r := range s.Teams {
		t.add(orDash(r.Team), strconv.Itoa(r.Share), money(r.ShareCost), hours(r.UsedSlotHours), hours(r.OwnSlotHours),
			hours(r.OthersSlotHours), hours(r.CommonSlotHours), hours(r.LentSlotHours), hours(r.BorrowedSlotHours),
			hours(r.IdleSlotHours), money(r.QuotaCharge), money(r.LoanPaid), money(r.LoanCredit), money(r.Elastic),
			money(r.Net), recovered(r))
		used += r.UsedSlotHours
		own += r.OwnSlotHours
		others += r.OthersSlotHours
		common += r.CommonSlotHours
		lent += r.LentSlotHours
		borrowed += r.BorrowedSlotHours
		idle += r.IdleSlotHours
		charge += r.QuotaCharge
		paid += r.LoanPaid
		credit += r.LoanCredit
		elastic += r.Elastic
	}
	p := s.Platform
	t.add("(platform)", strconv.Itoa(s.Common), money(p.CommonCost), "", "", "", "", hours(p.CommonLentSlotHours), "",
		hours(p.CommonIdleSlotHours), money(p.QuotaCharge), "", money(p.LoanReceipts), money(p.ElasticIdle), money(p.Net), "")
	t.add("TOTAL", strconv.Itoa(s.Quota), money(s.Platform.CommonCost+sumShareCost(s)), hours(used), hours(own),
		hours(others), hours(common), hours(lent+p.CommonLentSlotHours), hours(borrowed), hours(idle+p.CommonIdleSlotHours),
		money(charge+p.QuotaCharge), money(paid), money(credit+p.LoanReceipts), money(elastic+p.ElasticIdle), money(s.Sum()), "")
	if _, err := fmt.Fprintf(w, "settled by %s: fixed %s per slot-hour, loans at %s (%g × fixed); nets add up to %s of %s paid\n\n",
		s.Rule, money(s.FixedPrice), money(s.LoanPricePerSlotHour), s.LoanPrice, money(s.Sum()), money(s.Total)); err != nil {
		return err
	}
	if _, err := io.WriteString(w, t.String()); err != nil {
		return err
	}
	var loans table
	loans.left = 2
	loans.add("LENDER", "BORROWER", "SLOT-H", "COST")
	for _, r := range s.Teams {
		for _, f := range r.BorrowedFrom {
			lender := f.Team
			if lender == "" {
				lender = "(common)"
			}
			loans.add(lender, orDash(r.Team), hours(f.SlotHours), money(f.Cost))
		}
	}
	if len(loans.rows) == 1 {
		return nil
	}
	_, err := io.WriteString(w, "\n"+loans.String())
	return err
}

// recovered shows IdleRecovered, or "-" for a team with no idle share to
// recover.
func recovered(r TeamSettlement) string {
	if r.IdleCostAlone <= 0 {
		return "-"
	}
	return share(r.IdleRecovered)
}

func sumShareCost(s Settlement) float64 {
	sum := 0.0
	for _, r := range s.Teams {
		sum += r.ShareCost
	}
	return sum
}
