package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

// sweepPoll is how often `sweep submit --wait` reads the sweep's progress.
const sweepPoll = 500 * time.Millisecond

// trialStateOrder is the order trial counts are printed in: the live states
// first, then the outcomes.
var trialStateOrder = []sweep.TrialState{
	sweep.TrialPending, sweep.TrialQueued, sweep.TrialRunning,
	sweep.TrialSucceeded, sweep.TrialFailed, sweep.TrialStopped, sweep.TrialCancelled,
}

func runSweep(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		sweepUsage(e.out)
		return nil
	}
	switch args[0] {
	case "submit":
		return runSweepSubmit(ctx, e, args[1:])
	case "show":
		return runSweepShow(ctx, e, args[1:])
	case "cancel":
		return runSweepCancel(ctx, e, args[1:])
	case "list":
		return runSweepList(ctx, e, args[1:])
	}
	sweepUsage(e.errOut)
	return usageError{fmt.Sprintf("unknown verb %q", args[0])}
}

func sweepUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: ballast sweep VERB [flags]\n\nVerbs:")
	fmt.Fprintln(w, "  submit FILE [--wait]   submit a sweep spec (JSON; FILE - reads stdin)")
	fmt.Fprintln(w, "  show ID [--trials N]   a sweep's progress, best trial and best trials")
	fmt.Fprintln(w, "  cancel ID              cancel a sweep and its queued and running trials")
	fmt.Fprintln(w, "  list [--limit N]       the most recent sweeps")
	fmt.Fprintln(w, "\nRun 'ballast sweep VERB -h' for a verb's flags.")
}

func runSweepSubmit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "sweep submit", "sweep submit [flags] FILE   (FILE - reads the spec from stdin)")
	cfgPath := configFlag(fs)
	natsURL := fs.String("nats", "", "NATS URL (default: the config's nats.url)")
	wait := fs.Bool("wait", false, "follow the sweep until every trial has ended; fail if it was cancelled or no trial succeeded")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 1, "name one spec file, or - for stdin: ballast sweep submit FILE"); err != nil {
		return err
	}
	file := fs.Arg(0)
	data, err := readSpec(file)
	if err != nil {
		return err
	}
	// Decoding here reports a bad spec by field before anything is sent,
	// and without needing a running controller.
	spec, err := sweep.DecodeSpec(data)
	if err != nil {
		return fieldProblems("sweep spec "+file, err)
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if *natsURL != "" {
		cfg.NATS.URL = *natsURL
	}
	nc, err := connectNATS(cfg, "ballast-sweep")
	if err != nil {
		return err
	}
	defer nc.Close()
	rc, err := client.NewNATS(nc, subjects(cfg)).SubmitSweep(ctx, spec)
	if err != nil {
		return explain(err)
	}
	if err := printSweepReceipt(e, *out, rc); err != nil || !*wait {
		return err
	}
	store, closeStore, err := storeFor(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	return waitSweep(ctx, e, flows.New(store), store, rc.SweepID, *out)
}

// readSpec reads at most one byte past the spec limit, so an oversized
// file is reported by DecodeSpec with the limit instead of read whole.
func readSpec(file string) ([]byte, error) {
	var r io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, sweep.MaxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return data, nil
}

// fieldProblems formats a validation error with each problem on its own
// line, as explain does for the intake's answers.
func fieldProblems(what string, err error) error {
	var ve *jobs.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) == 0 {
		return fmt.Errorf("%s: %w", what, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is invalid; nothing was sent:", what)
	for _, p := range ve.Problems {
		fmt.Fprintf(&b, "\n  %s: %s", p.Field, p.Message)
	}
	return errors.New(b.String())
}

func printSweepReceipt(e *env, out string, rc intake.SweepReceipt) error {
	if out == "json" {
		return writeJSON(e.out, rc)
	}
	note := ""
	if rc.Duplicate {
		note = " (existing sweep for this idempotency key; nothing new was enqueued)"
	}
	_, err := fmt.Fprintf(e.out, "sweep %s: %d trials, %d queued%s\n", rc.SweepID, rc.Trials, rc.Queued, note)
	return err
}

// waitSweep polls the sweep until every trial has ended, printing a line
// whenever the counts change, then prints the sweep as `sweep show` does.
// Progress lines go to stderr under -o json so stdout stays JSON.
func waitSweep(ctx context.Context, e *env, sweeps *flows.Store, store *queues.Store, id, out string) error {
	progress := e.out
	if out == "json" {
		progress = e.errOut
	}
	last := ""
	for {
		v, err := controller.LoadSweepView(ctx, sweeps, store, id)
		if err != nil {
			return err
		}
		if line := countsText(v.Summary); line != last {
			fmt.Fprintf(progress, "%s  %d/%d done: %s\n", time.Now().Format("15:04:05"), doneCount(v.Summary), v.Summary.Total, line)
			last = line
		}
		if v.Summary.Done {
			if out == "json" {
				err = writeJSON(e.out, v)
			} else {
				fmt.Fprintln(e.out)
				err = showSweep(e, v, 20)
			}
			if err != nil {
				return err
			}
			switch {
			case v.Sweep.State == flows.SweepCancelled:
				return fmt.Errorf("sweep %s was cancelled", id)
			case v.Summary.Counts[sweep.TrialSucceeded] == 0:
				return fmt.Errorf("sweep %s: no trial succeeded (see: ballast jobs logs JOB for a trial's output)", id)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sweepPoll):
		}
	}
}

func runSweepShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "sweep show", "sweep show [--trials N] [-o json] ID")
	cfgPath := configFlag(fs)
	trials := fs.Int("trials", 20, "most trials listed, best metric first (0: all)")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 1, "give exactly one sweep ID (see: ballast sweep list)"); err != nil {
		return err
	}
	if *trials < 0 {
		return usageError{fmt.Sprintf("--trials %d: give 0 (all) or a positive number", *trials)}
	}
	store, closeFn, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	v, err := controller.LoadSweepView(ctx, flows.New(store), store, fs.Arg(0))
	if err != nil {
		return err
	}
	if *out == "json" {
		return writeJSON(e.out, v)
	}
	return showSweep(e, v, *trials)
}

// showSweep prints a sweep's header and up to limit trials (0: all).
func showSweep(e *env, v controller.SweepView, limit int) error {
	now := time.Now()
	s := v.Sweep.Spec.WithDefaults()
	maxPar := "no limit"
	if s.MaxParallel > 0 {
		maxPar = fmt.Sprint(s.MaxParallel)
	}
	best := "-"
	if b := v.Summary.Best; b != nil {
		best = fmt.Sprintf("trial %d, %s %s, job %s", b.Index, s.Metric, metricText(b.Metric), dash(v.BestJob))
	}
	rows := [][]any{
		{"sweep", v.Sweep.ID}, {"state", v.Sweep.State}, {"template", s.Template},
		{"metric", fmt.Sprintf("%s (%s)", s.Metric, s.Goal)}, {"max parallel", maxPar},
		{"trials", fmt.Sprintf("%d/%d done: %s", doneCount(v.Summary), v.Summary.Total, countsText(v.Summary))},
		{"best", best},
	}
	for _, k := range slices.Sorted(maps.Keys(v.BestParams)) {
		rows = append(rows, []any{"best " + k, fmt.Sprint(v.BestParams[k])})
	}
	rows = append(rows, []any{"created", ago(v.Sweep.CreatedAt, now)}, []any{"finished", ago(v.Sweep.FinishedAt, now)})
	if err := table(e.out, "FIELD\tVALUE", rows); err != nil {
		return err
	}
	ordered := rankTrials(v.Trials, s.Goal)
	shown := ordered
	if limit > 0 && len(shown) > limit {
		shown = shown[:limit]
	}
	fmt.Fprintln(e.out)
	trows := make([][]any, len(shown))
	for i, t := range shown {
		m := "-"
		if t.Metric != nil {
			m = metricText(*t.Metric)
		}
		trows[i] = []any{t.Index, t.State, m, dash(v.Sweep.Trials[t.Index])}
	}
	if err := table(e.out, "TRIAL\tSTATE\tMETRIC\tJOB", trows); err != nil {
		return err
	}
	if n := len(ordered) - len(shown); n > 0 {
		fmt.Fprintf(e.out, "... and %d more trials (--trials 0 lists all)\n", n)
	}
	return nil
}

// rankTrials orders trials best metric first under goal, ties and trials
// without a metric by index. Unlike Summary.Best, unfinished trials rank
// too: while a sweep runs, the leaders so far are what an operator wants.
func rankTrials(trials []sweep.TrialStatus, goal sweep.Goal) []sweep.TrialStatus {
	out := append([]sweep.TrialStatus(nil), trials...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Metric == nil && b.Metric == nil:
			return a.Index < b.Index
		case a.Metric == nil || b.Metric == nil:
			return a.Metric != nil
		case *a.Metric != *b.Metric:
			if goal == sweep.Maximize {
				return *a.Metric > *b.Metric
			}
			return *a.Metric < *b.Metric
		}
		return a.Index < b.Index
	})
	return out
}

func runSweepCancel(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "sweep cancel", "sweep cancel ID")
	cfgPath := configFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"give exactly one sweep ID (see: ballast sweep list)"}
	}
	id := fs.Arg(0)
	store, closeFn, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	fl := flows.New(store)
	cancelled, err := controller.CancelSweep(ctx, fl, store, id)
	if errors.Is(err, jobs.ErrNotFound) && !cancelled {
		return fmt.Errorf("no sweep %s (records are kept for the retention period; see: ballast sweep list)", id)
	}
	if cancelled {
		fmt.Fprintf(e.out, "sweep %s cancelled: no further trial is enqueued, queued trials are dropped, and running trials get SIGTERM within a heartbeat\n", id)
	} else {
		state := "ended"
		if rec, gerr := fl.GetSweep(ctx, id); gerr == nil {
			state = string(rec.State)
		}
		fmt.Fprintf(e.out, "sweep %s had already ended (%s); nothing changed\n", id, state)
	}
	if err != nil {
		return fmt.Errorf("not every trial's job could be cancelled: %w (the controller retries at its next tick)", err)
	}
	return nil
}

// sweepBrief is one sweep as `sweep list -o json` prints it: the summary
// without every trial, which may be thousands.
type sweepBrief struct {
	ID         string                   `json:"id"`
	Template   string                   `json:"template"`
	State      flows.SweepState         `json:"state"`
	Trials     int                      `json:"trials"`
	Done       int                      `json:"done"`
	Counts     map[sweep.TrialState]int `json:"counts"`
	Best       *sweep.Best              `json:"best,omitempty"`
	CreatedAt  time.Time                `json:"created_at"`
	FinishedAt time.Time                `json:"finished_at,omitempty"`
}

func runSweepList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "sweep list", "sweep list [--limit N] [-o json]")
	cfgPath := configFlag(fs)
	limit := fs.Int("limit", 20, "most sweeps shown, newest first")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 0, "sweep list takes no arguments; for one sweep: ballast sweep show ID"); err != nil {
		return err
	}
	if *limit <= 0 {
		return usageError{fmt.Sprintf("--limit %d: give a positive number", *limit)}
	}
	store, closeFn, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	fl := flows.New(store)
	ids, err := fl.ListSweeps(ctx, *limit)
	if err != nil {
		return err
	}
	briefs := make([]sweepBrief, 0, len(ids))
	for _, id := range ids {
		v, err := controller.LoadSweepView(ctx, fl, store, id)
		if errors.Is(err, jobs.ErrNotFound) {
			continue // expired between the index and the record
		}
		if err != nil {
			return err
		}
		briefs = append(briefs, sweepBrief{ID: id, Template: v.Sweep.Spec.Template, State: v.Sweep.State, Trials: v.Summary.Total,
			Done: doneCount(v.Summary), Counts: v.Summary.Counts, Best: v.Summary.Best,
			CreatedAt: v.Sweep.CreatedAt, FinishedAt: v.Sweep.FinishedAt})
	}
	if *out == "json" {
		return writeJSON(e.out, briefs)
	}
	now := time.Now()
	rows := make([][]any, len(briefs))
	for i, b := range briefs {
		best := "-"
		if b.Best != nil {
			best = fmt.Sprintf("%s (trial %d)", metricText(b.Best.Metric), b.Best.Index)
		}
		rows[i] = []any{b.ID, b.Template, b.State, b.Trials, b.Done, best, ago(b.CreatedAt, now)}
	}
	return table(e.out, "ID\tTEMPLATE\tSTATE\tTRIALS\tDONE\tBEST\tCREATED", rows)
}

// doneCount is the number of trials in a terminal state.
func doneCount(s sweep.Summary) int {
	n := 0
	for st, c := range s.Counts {
		if st.Terminal() {
			n += c
		}
	}
	return n
}

// countsText is "2 running, 3 succeeded", in a fixed order so that
// --wait's progress lines change only when the counts do.
func countsText(s sweep.Summary) string {
	var parts []string
	for _, st := range trialStateOrder {
		if n := s.Counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(parts) == 0 {
		return "no trials"
	}
	return strings.Join(parts, ", ")
}

func metricText(m float64) string { return fmt.Sprintf("%.6g", m) }
