package cli

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ballastdev/ballast/orchestrator/web/insight"
)

// runTop shows the overview the dashboard shows, redrawn in place every
// --every until interrupted (or once with --once).
func runTop(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "top", "top [--every 2s] [--once] [-o json]")
	cfgPath := configFlag(fs)
	every := fs.Duration("every", 2*time.Second, "how often to redraw")
	once := fs.Bool("once", false, "print one overview and exit")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 0, "top takes flags only"); err != nil {
		return err
	}
	if *every < 100*time.Millisecond {
		return usageError{fmt.Sprintf("--every %s: give 100ms or more", *every)}
	}
	src, closeFn, err := openSource(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	live := &insight.Live{Source: src, MaxAge: *every / 2}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	t := time.NewTicker(*every)
	defer t.Stop()
	for {
		o, err := live.Overview(ctx)
		switch {
		case ctx.Err() != nil:
			return nil // interrupted mid-read: a clean exit
		case err != nil && (*once || *out == "json"):
			return err
		case err != nil:
			// Keep watching: Redis coming back heals the picture, as on
			// the dashboard.
			fmt.Fprint(e.out, "\x1b[H\x1b[2J")
			fmt.Fprintf(e.out, "ballast  %s  cannot read the overview: %v\nretrying every %s; Ctrl-C to stop\n",
				time.Now().Format("15:04:05"), err, *every)
		case *out == "json":
			if err := writeJSON(e.out, o); err != nil {
				return err
			}
		case *once:
			printOverview(e.out, o)
		default:
			// Home the cursor and clear, then draw: the picture replaces
			// the last one instead of scrolling.
			fmt.Fprint(e.out, "\x1b[H\x1b[2J")
			printOverview(e.out, o)
		}
		if *once || *out == "json" {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// printOverview writes the overview as the terminal's dashboard: pools,
// the key measures, today's cost, workers, queues, running jobs, advice.
func printOverview(w io.Writer, o insight.Overview) {
	fmt.Fprintf(w, "ballast  %s  leader %s\n\n", o.At.Format("15:04:05"), dash(o.Leader))
	k := o.Key
	fmt.Fprintf(w, "last %s: elastic wait p95 %s over %d starts · fixed idle now %s, mean %s · preemptions %d%s\n",
		time.Duration(k.RecentSeconds*float64(time.Second)), secs(k.ElasticWaitP95Seconds), k.ElasticStarts,
		pct(k.FixedIdleNow), pct(k.FixedIdleMean), k.Preemptions, kinds(k.PreemptionsByKind))
	c := o.Cost
	fmt.Fprintf(w, "today: paid %.2f (fixed %.2f, elastic %.2f) · idle %.2f · lost work %.2f · premium %.2f\n\n",
		c.Total, c.Fixed, c.Elastic, c.Idle, c.LostWork, c.Premium)

	rows := make([][]any, 0, len(o.Pools))
	for _, p := range o.Pools {
		rows = append(rows, []any{p.Name, p.Kind, p.Busy, p.Idle, p.Workers, p.Draining, fmt.Sprintf("%.2f", p.CostPerHour)})
	}
	_ = table(w, "POOL\tKIND\tBUSY\tIDLE\tWORKERS\tDRAINING\tCOST/H", rows)
	fmt.Fprintln(w)
	rows = rows[:0]
	for _, t := range c.Teams {
		rows = append(rows, []any{t.Name, fmt.Sprintf("%.2f", t.Cost), fmt.Sprintf("%.3f", t.SlotHours), fmt.Sprintf("%.2f", t.LostCost), fmt.Sprintf("%.2f", t.Premium)})
	}
	if len(rows) > 0 {
		_ = table(w, "TEAM\tCOST TODAY\tSLOT-H\tLOST\tPREMIUM", rows)
		fmt.Fprintln(w)
	}
	rows = rows[:0]
	for _, wk := range o.Workers {
		rows = append(rows, []any{wk.ID, wk.Pool, fmt.Sprintf("%d/%d", wk.Busy, wk.Slots), wk.State,
			secs(wk.AgeSeconds), fmt.Sprintf("%.2f", wk.BilledCost)})
	}
	_ = table(w, "WORKER\tPOOL\tBUSY\tSTATE\tAGE\tBILLED", rows)
	fmt.Fprintln(w)
	rows = rows[:0]
	for _, q := range o.Queues {
		rows = append(rows, []any{q.Name, q.Pending, q.Running, secs(q.OldestSeconds)})
	}
	_ = table(w, "QUEUE\tPENDING\tRUNNING\tOLDEST", rows)
	fmt.Fprintln(w)
	rows = rows[:0]
	for _, j := range o.Running {
		rows = append(rows, []any{j.ID, dash(j.Template), dash(j.Team), j.Pool, j.Worker, j.Runs, j.Attempt,
			secs(j.RunSeconds), secs(j.WaitSeconds), fmt.Sprintf("%.4f", j.Cost)})
	}
	_ = table(w, "JOB\tTEMPLATE\tTEAM\tPOOL\tWORKER\tRUNS\tDELIVERIES\tRUNNING\tWAITED\tCOST", rows)
	for _, r := range o.Recommendations {
		fmt.Fprintf(w, "\n[%s] %s\n  %s\n", r.Severity, r.Title, r.Action)
	}
	for _, p := range o.Problems {
		fmt.Fprintf(w, "\nnote: %s\n", p)
	}
}

func secs(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

func pct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}

func kinds(m map[string]int) string {
	var parts []string
	for _, k := range []string{"preempted", "requeued", "lost"} {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
