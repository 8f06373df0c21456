package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
)

// runCost prices a window of what ran (the usage records and worker lives
// in Redis) and prints one view of it.
func runCost(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cost", "cost [--window 24h | --from T --until T] [--by pool|team|template|day|job] [--settle] [-o json]")
	cfgPath := configFlag(fs)
	window := fs.Duration("window", 24*time.Hour, "how far back from --until to price")
	fromFlag := fs.String("from", "", "start of the window, RFC 3339 (instead of --window)")
	untilFlag := fs.String("until", "", "end of the window, RFC 3339 (default now)")
	by := fs.String("by", "pool", "view: "+strings.Join(cost.TableViews(), ", "))
	settle := fs.Bool("settle", false, "settle the quota between teams (shares and chargeback in the config); goes with --by team")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 0, "cost takes flags only"); err != nil {
		return err
	}
	if !slices.Contains(cost.TableViews(), *by) {
		return usageError{fmt.Sprintf("--by %q: use one of %s", *by, strings.Join(cost.TableViews(), ", "))}
	}
	if *settle && flagSet(fs, "by") && *by != "team" {
		return usageError{fmt.Sprintf("--settle settles between teams: use it with --by team, not --by %s", *by)}
	}
	until := time.Now().UTC()
	if *untilFlag != "" {
		t, err := time.Parse(time.RFC3339, *untilFlag)
		if err != nil {
			return usageError{fmt.Sprintf("--until %q: give an RFC 3339 time such as 2026-11-29T00:00:00Z", *untilFlag)}
		}
		until = t
	}
	if *window <= 0 {
		return usageError{fmt.Sprintf("--window %s: give a positive duration", *window)}
	}
	from := until.Add(-*window)
	if *fromFlag != "" {
		t, err := time.Parse(time.RFC3339, *fromFlag)
		if err != nil {
			return usageError{fmt.Sprintf("--from %q: give an RFC 3339 time such as 2026-11-28T00:00:00Z", *fromFlag)}
		}
		from = t
	}
	if !from.Before(until) {
		return usageError{"--from must be before --until"}
	}
	src, closeFn, err := openSource(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	if oldest := time.Now().Add(-src.KeptFor()); from.Before(oldest) {
		return usageError{fmt.Sprintf("--from %s is before the oldest usage records kept (controller.cost_retention is %s): start at %s or later",
			from.Format(time.RFC3339), src.KeptFor(), oldest.UTC().Format(time.RFC3339))}
	}
	var rep cost.Report
	var st cost.Settlement
	var problems []string
	if *settle {
		rep, st, problems, err = src.Settle(ctx, from, until)
	} else {
		rep, problems, err = src.Cost(ctx, from, until)
	}
	if err != nil {
		return err
	}
	if *out == "json" {
		body := map[string]any{"report": rep, "summary": insight.CostViewOf(rep), "problems": problems}
		if *settle {
			body["settlement"] = st
		}
		return writeJSON(e.out, body)
	}
	v := insight.CostViewOf(rep)
	// The report starts where pricing did: no earlier than Ballast's first
	// records, so a young install is not charged a window of quota it did
	// not exist for.
	fmt.Fprintf(e.out, "%s → %s: paid %.2f (fixed %.2f, elastic %.2f), idle %.2f, lost work %.2f, premium over fixed %.2f\n",
		rep.From.UTC().Format(time.RFC3339), until.Format(time.RFC3339), v.Total, v.Fixed, v.Elastic, v.Idle, v.LostWork, v.Premium)
	if rep.From.After(from) {
		fmt.Fprintf(e.out, "(priced from %s, when Ballast started keeping records, not from %s)\n",
			rep.From.UTC().Format(time.RFC3339), from.Format(time.RFC3339))
	}
	fmt.Fprintln(e.out)
	if *settle {
		err = st.Table(e.out)
	} else {
		err = rep.Table(e.out, *by)
	}
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(e.errOut, "note: %s\n", p)
	}
	return nil
}
