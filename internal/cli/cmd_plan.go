package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
)

func runPlan(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "plan", "plan (--trace FILE | --synthetic N | --alibaba-gpu FILE | --alibaba-spot FILE | --pai FILE | --history D) [--html FILE] [flags]")
	cfgPath := configFlag(fs)
	src := addTraceFlags(fs)
	sf := addSimFlags(fs)
	target := fs.Duration("wait-target", 10*time.Minute, "p95 wait of burst and core jobs the simulated plan must meet")
	tuneDays := fs.Int("tune-days", 14, "tune the watermarks on the trace's last N days (0: the whole trace)")
	overflow := fs.Bool("core-overflow", true, "consider plans where core work overflows to on-demand after a wait (rule 7, capacity.core_overflow); false keeps every plan without it")
	htmlPath := fs.String("html", "", "also write an HTML report with charts to FILE")
	svgPrefix := fs.String("svg", "", "also write the charts as PREFIX-demand.svg, PREFIX-cost.svg and PREFIX-wait.svg")
	sizeShares := fs.Bool("shares", false, "only size team shares of the quota from the trace's demand (see --share-percentile), without simulating")
	sharePct := fs.Float64("share-percentile", 90, "with --shares, the percentile of each team's demand its share covers")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 0, "plan takes flags only"); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	tr, err := src.load(ctx, *cfgPath, e.errOut)
	if err != nil {
		return err
	}
	if *sizeShares {
		quota := *sf.quota
		if quota < 0 {
			quota = 0
			for _, n := range cfg.FixedQuota() {
				quota += n
			}
		}
		return planShares(e, tr, quota, *sharePct, *out)
	}
	days := *tuneDays
	if days == 0 {
		days = -1 // Make reads 0 as "default"; negative is the whole trace
	}
	var lastReport time.Time
	progress := func(pr planner.Progress) {
		// At most one line a second: a fast plan prints one or two.
		if time.Since(lastReport) < time.Second {
			return
		}
		lastReport = time.Now()
		fmt.Fprintf(e.errOut, "%s: %d of at most %d simulations, %s so far, about %s left\n",
			pr.Stage, pr.Done, pr.Expected, pr.Elapsed.Round(100*time.Millisecond), pr.Left.Round(100*time.Millisecond))
	}
	fixedPool := ""
	if names := slices.Sorted(maps.Keys(cfg.FixedQuota())); len(names) > 0 {
		fixedPool = names[0]
	}
	so, err := sf.options(ctx, cfg, *src.seed, e.errOut)
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		// A plan's simulations make much short-lived garbage over a small
		// live heap, and at the default the collector took about a sixth
		// of plan's CPU on the Alibaba trace. Collecting at five times the
		// live heap rather than twice cut plan's CPU by about 13% for some
		// 45 MiB more at peak. A GOGC the user set wins.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	p, err := untilCancelled(ctx, func() (planner.Plan, error) {
		return planner.Make(tr, planner.Options{Sim: so, TuneDays: days, WithoutCoreOverflow: !*overflow,
			FixedPool: fixedPool, Sweep: planner.SweepOptions{WaitTarget: *target, Progress: progress}})
	})
	if err != nil {
		return err
	}
	if *htmlPath != "" {
		if err := writeFile(*htmlPath, p.WriteHTML); err != nil {
			return err
		}
		fmt.Fprintf(e.errOut, "wrote %s\n", *htmlPath)
	}
	if *svgPrefix != "" {
		cost, wait := p.SweepCharts()
		for name, c := range map[string]planner.Chart{"demand": p.DemandChart(), "cost": cost, "wait": wait} {
			if err := writeFile(*svgPrefix+"-"+name+".svg", c.WriteSVG); err != nil {
				return err
			}
		}
	}
	if *out == "json" {
		return writeJSON(e.out, p)
	}
	return p.WriteText(e.out)
}

// untilCancelled runs f, but returns as soon as ctx ends (SIGINT, SIGTERM):
// the simulator does not look at a context, and a planning run of minutes
// must still stop when asked. The process exits right after, ending f.
func untilCancelled[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("stopped before the simulations finished: %w", ctx.Err())
	}
}

// writeFile writes what write produces to path.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
