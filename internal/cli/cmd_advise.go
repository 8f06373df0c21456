package cli

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/advisor"
	"github.com/ballastdev/ballast/orchestrator/planner"
	"github.com/ballastdev/ballast/orchestrator/trace"
)

// runAdvise reads a window of what happened (job records, the quota's idle
// share sampled by the leader) and prints the advisor's recommendations.
func runAdvise(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "advise", "advise [--window 24h] [-o json]")
	cfgPath := configFlag(fs)
	window := fs.Duration("window", 24*time.Hour, "how far back to look")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 0, "advise takes flags only"); err != nil {
		return err
	}
	if *window <= 0 {
		return usageError{fmt.Sprintf("--window %s: give a positive duration", *window)}
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	store, closeFn, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	until := time.Now().UTC()
	pc := cfg.PolicyConfig()
	w := advisor.Window{From: until.Add(-*window), Until: until, High: pc.High, Low: pc.Low}
	// Without prices the advisor says so and skips what needs them.
	w.Prices, _ = planner.PricesOf(cfg.PolicyPools(), 0)
	for _, n := range cfg.FixedQuota() {
		w.FixedSlots += n
	}
	tr := trace.Trace{Name: "advise", Start: w.From}
	err = store.History(ctx, w.From, until, func(j jobs.Job) error {
		if j.Spec.Class == jobs.ClassBurst && !j.StartedAt.IsZero() {
			w.ElasticWaits = append(w.ElasticWaits, advisor.Wait{At: j.StartedAt, Class: string(j.Spec.Class), Wait: j.StartedAt.Sub(j.QueuedAt)})
		}
		if tj, ok := traceJob(j, tr.Start); ok {
			tr.Jobs = append(tr.Jobs, tj)
		}
		return nil
	})
	if err != nil {
		return err
	}
	samples, err := store.Samples(ctx, advisor.SeriesFixedIdle, w.From, until)
	if err != nil {
		return err
	}
	for _, s := range samples {
		w.FixedIdle = append(w.FixedIdle, advisor.Sample{At: s.At, Value: s.Value})
	}
	if len(tr.Jobs) > 0 {
		trace.SortJobs(tr.Jobs)
		if h := planner.DemandCurve(tr, planner.DemandStep).Hourly(); len(h) > 0 {
			w.MinDemand = math.Inf(1)
			for _, v := range h {
				w.MinDemand = math.Min(w.MinDemand, v)
			}
		}
		w.Templates = advisor.TemplatesFrom(planner.Templates(tr, w.Prices), max(1, int(window.Hours()/24)))
	}
	recs := advisor.Advise(w)
	if *out == "json" {
		return writeJSON(e.out, map[string]any{"window": w, "recommendations": recs})
	}
	if len(recs) == 0 {
		fmt.Fprintf(e.out, "nothing to change over the last %s (%d jobs, %d idle samples)\n", *window, len(tr.Jobs), len(samples))
		return nil
	}
	for _, r := range recs {
		fmt.Fprintf(e.out, "[%s] %s\n  %s\n", r.Severity, r.Title, r.Action)
		if r.RuleOfThumb != "" {
			fmt.Fprintf(e.out, "  rule of thumb: %s\n", r.RuleOfThumb)
		}
	}
	return nil
}
