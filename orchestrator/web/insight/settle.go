package insight

import (
	"context"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/cost"
)

// Settle settles [from, until) between the teams of s.Shares under
// s.Chargeback: Ledger, then cost.Settle. The report of the same ledger
// comes with it, so a caller shows both from one read.
func (s Source) Settle(ctx context.Context, from, until time.Time) (cost.Report, cost.Settlement, []string, error) {
	l, problems, err := s.Ledger(ctx, from, until)
	if err != nil {
		return cost.Report{}, cost.Settlement{}, problems, err
	}
	r, err := cost.Compute(l)
	if err == nil {
		var st cost.Settlement
		if st, err = cost.Settle(l, s.Shares, s.Chargeback); err == nil {
			return r, st, problems, nil
		}
	}
	// As in Cost: the ledger is consistent and the shares were checked
	// with the config, so a refusal is a fault of the records.
	return cost.Report{}, cost.Settlement{}, problems, fmt.Errorf("insight: the records of %s → %s cannot be settled: %v",
		from.Format(time.RFC3339), until.Format(time.RFC3339), err)
}
