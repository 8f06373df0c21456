package cli

import (
	"context"
	"fmt"
	"time"
)

// runAdvise reads a window of what happened (attempts, job records, the
// quota's idle share sampled by the leader) and prints the advisor's
// recommendations.
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
	src, closeFn, err := openSource(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	until := time.Now().UTC()
	w, recs, err := src.Advise(ctx, until.Add(-*window), until)
	if err != nil {
		return err
	}
	if *out == "json" {
		return writeJSON(e.out, map[string]any{"window": w, "recommendations": recs})
	}
	if len(recs) == 0 {
		fmt.Fprintf(e.out, "nothing to change over the last %s (%d elastic starts, %d idle samples, %d templates)\n",
			*window, len(w.ElasticWaits), len(w.FixedIdle), len(w.Templates))
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
