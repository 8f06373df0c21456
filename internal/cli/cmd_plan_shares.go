package cli

import (
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// planShares prints plan --shares: a share per team of tr sized to cover
// its demand pct percent of the time, on a quota of quota slots.
func planShares(e *env, tr trace.Trace, quota int, pct float64, out string) error {
	if pct <= 0 || pct > 100 {
		return usageError{fmt.Sprintf("--share-percentile %v: give a percentile above 0 and at most 100, such as 90", pct)}
	}
	s, err := planner.SizeShares(tr, quota, pct/100)
	if err != nil {
		return err
	}
	if out == "json" {
		return writeJSON(e.out, s)
	}
	if len(s.Teams) == 0 {
		fmt.Fprintln(e.out, "no job of the trace names a team: there is nothing to size shares for")
		return nil
	}
	fmt.Fprintf(e.out, "shares of a %d-slot quota, each covering its team's demand %g%% of the time over %s of trace:\n\n",
		quota, pct, tr.Span().Round(time.Minute))
	p := "P" + strconv.FormatFloat(pct, 'f', -1, 64)
	w := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "TEAM\tMEAN\tMEDIAN\t%s\tPEAK\tSHARE\n", p)
	for _, t := range s.Teams {
		fmt.Fprintf(w, "%s\t%.2f\t%d\t%d\t%d\t%d\n", t.Team, t.Mean, t.Median, t.Percentile, t.Peak, t.Slots)
	}
	fmt.Fprintf(w, "(common)\t\t\t\t\t%d\n", s.Common)
	if err := w.Flush(); err != nil {
		return err
	}
	if s.Scaled {
		fmt.Fprintf(e.out, "\nthe %s figures add up to more than the quota: the shares are scaled down to fit it\n", p)
	}
	fmt.Fprintln(e.out, "\nset shares.teams.NAME.slots to the SHARE column (and reclaim_within for each team)")
	return nil
}
