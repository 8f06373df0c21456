package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/logs"
)

func runJobs(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && (args[0] == "show" || args[0] == "logs") {
		return runJobsOne(ctx, e, args[0], args[1:])
	}
	if len(args) > 0 && args[0] == "list" {
		args = args[1:]
	}
	fs := newFlags(e, "jobs", "jobs [list] [--state S] [--template T] [--team T] [--label K=V] [--since D] [--limit N] [--watch] | jobs show ID | jobs logs ID")
	cfgPath := configFlag(fs)
	state := fs.String("state", "", "only jobs in this state: queued, running, succeeded, failed, cancelled")
	template := fs.String("template", "", "only jobs of this template")
	team := fs.String("team", "", "only jobs charged to this team")
	var labels labelFlag
	fs.Var(&labels, "label", "only jobs with this label, as KEY=VALUE (repeat for several; all must match)")
	since := fs.String("since", "", "only jobs created since: a duration back from now (2h, 30m) or an RFC 3339 time")
	limit := fs.Int("limit", 20, "most jobs shown, newest first")
	watch := fs.Bool("watch", false, "redraw the list every --every until interrupted")
	every := fs.Duration("every", 2*time.Second, "redraw interval of --watch")
	out := outputFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected %q: filters are flags (--state, --template, ...), or use jobs show ID", fs.Arg(0))}
	}
	if *state != "" && !jobs.State(*state).Valid() {
		return usageError{fmt.Sprintf("--state %q: use queued, running, succeeded, failed or cancelled", *state)}
	}
	if *watch && *every <= 0 {
		return usageError{"--every must be positive"}
	}
	opts := queues.ListOptions{Limit: *limit, State: jobs.State(*state), Template: *template, Team: *team, Labels: labels.m}
	if *since != "" {
		t, err := parseSince(*since, time.Now())
		if err != nil {
			return usageError{"--since: " + err.Error()}
		}
		opts.Since = t
	}
	store, closeFn, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	for {
		list, err := store.List(ctx, opts)
		if err != nil && *watch && ctx.Err() != nil {
			return nil // interrupted mid-read: the end of a watch
		}
		if err != nil {
			return err
		}
		if *watch && e.color {
			fmt.Fprint(e.out, "\x1b[H\x1b[2J") // redraw in place on a terminal
		} else if *watch {
			fmt.Fprintf(e.out, "--- %s\n", time.Now().Format(time.RFC3339))
		}
		if err := printJobList(e, *out, list); err != nil || !*watch {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(*every):
		}
	}
}

func printJobList(e *env, out string, list []jobs.Job) error {
	if out == "json" {
		return writeJSON(e.out, list)
	}
	now := time.Now()
	rows := make([][]any, len(list))
	for i, j := range list {
		rows[i] = []any{j.ID, j.Spec.Template, e.paintState(j.State), j.Runs, j.Attempt, j.Queue, dash(j.Worker), ago(j.CreatedAt, now), dash(j.LastError)}
	}
	return table(e.out, "ID\tTEMPLATE\tSTATE\tRUNS\tDELIVERIES\tQUEUE\tWORKER\tCREATED\tLAST ERROR", rows)
}

// paintState colours a job state on a terminal: green for success, red
// for failure, so a failed job stands out in a long list.
func (e *env) paintState(s jobs.State) string {
	c := map[jobs.State]string{jobs.StateQueued: yellow, jobs.StateRunning: cyan, jobs.StateSucceeded: green,
		jobs.StateFailed: red, jobs.StateCancelled: grey}[s]
	if c == "" {
		return string(s)
	}
	return e.paint(c, string(s))
}

func runJobsOne(ctx context.Context, e *env, verb string, args []string) error {
	fs := newFlags(e, "jobs "+verb, "jobs "+verb+" [flags] ID")
	cfgPath := configFlag(fs)
	out := outputFlag(fs)
	followLogs := fs.Bool("f", false, "logs: keep following new lines until the job ends")
	if err := parseArgs(fs, args, out, 1, "give exactly one job ID"); err != nil {
		return err
	}
	id := fs.Arg(0)
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	store, closeFn, err := storeFor(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeFn()
	j, err := store.Get(ctx, id)
	if err != nil {
		return err
	}
	if verb == "show" {
		att, err := jobAttempts(ctx, cfg, store, j)
		if err != nil {
			return err
		}
		cks, err := jobCheckpoints(ctx, cfg, store, id)
		if err != nil {
			// The record and its history are worth showing all the same.
			fmt.Fprintf(e.errOut, "checkpoints not read: %v\n", err)
		}
		if *out == "json" {
			return writeJSON(e.out, struct {
				jobs.Job
				Runs        int                 `json:"runs"`
				Deliveries  int                 `json:"deliveries"`
				History     insight.JobAttempts `json:"history"`
				Checkpoints []keptCheckpoint    `json:"checkpoints,omitempty"`
			}{j, att.Runs, att.Deliveries, att, cks})
		}
		return showJob(e, j, att, cks)
	}
	output, after := logs.New(store), ""
	for {
		lines, err := output.Logs(ctx, id, after, 1000)
		if err != nil {
			return err
		}
		for _, l := range lines {
			if *out == "json" {
				writeJSON(e.out, l)
			} else {
				fmt.Fprintf(e.out, "[%d %s] %s\n", l.Attempt, l.Stream, l.Text)
			}
			after = l.ID
		}
		if len(lines) == 1000 {
			continue
		}
		if !*followLogs {
			return nil
		}
		if j, err = store.Get(ctx, id); err == nil && j.State.Terminal() {
			// One more read picks up the lines flushed with the end.
			if lines, _ := output.Logs(ctx, id, after, 1000); len(lines) == 0 {
				return nil
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func showJob(e *env, j jobs.Job, att insight.JobAttempts, cks []keptCheckpoint) error {
	now := time.Now()
	code := "-"
	if j.ExitCode != nil {
		code = fmt.Sprint(*j.ExitCode)
	}
	rows := [][]any{
		{"id", j.ID}, {"template", dash(j.Spec.Template)}, {"command", dash(strings.Join(j.Spec.Command, " "))},
		{"class", j.Spec.Class}, {"team", dash(j.Spec.Team)}, {"state", j.State},
		{"runs", fmt.Sprintf("%d (attempts that started on a worker)", att.Runs)},
		{"deliveries", fmt.Sprintf("%d (queueings, moves of a waiting job included: the fencing counter)", j.Attempt)},
		{"queue", j.Queue}, {"worker", dash(j.Worker)}, {"retries", j.Retries}, {"requeues", j.Requeues},
		{"checkpoint", dash(j.Checkpoint)}, {"exit code", code}, {"last error", dash(j.LastError)},
		{"created", ago(j.CreatedAt, now)}, {"started", ago(j.StartedAt, now)}, {"finished", ago(j.FinishedAt, now)},
		{"timeout", j.Spec.Timeout}, {"checkpointable", j.Spec.Checkpointable}, {"retryable", j.Spec.Retryable},
	}
	for _, k := range slices.Sorted(maps.Keys(j.Spec.Params)) {
		rows = append(rows, []any{"param " + k, fmt.Sprint(j.Spec.Params[k])})
	}
	rows = append(rows, sizeRows(j)...)
	rows = append(rows, qosRows(j)...)
	rows = append(rows, []any{"cost", fmt.Sprintf("%.4f", att.Cost)})
	if err := table(e.out, "FIELD\tVALUE", rows); err != nil {
		return err
	}
	fmt.Fprintf(e.out, "\nattempts (%s):\n", att.Reasons)
	if err := table(e.out, "#\tBEGAN\tQUEUE\tRAN ON\tRAN FOR\tCOST\tOUTCOME\tREASON", attemptRows(att)); err != nil {
		return err
	}
	if len(cks) == 0 {
		return nil
	}
	fmt.Fprintf(e.out, "\ncheckpoints kept in the store (newest first):\n")
	return table(e.out, "#\tWHEN\tTOKEN\tATTEMPT\tSIZE\tUPLOADED\tUPLOAD TIME\tMANIFEST", checkpointRows(cks, now))
}

// sizeRows show what a sized job holds and where it was placed, and the
// share of a GPU a job asks for; nothing for a one-slot job.
func sizeRows(j jobs.Job) [][]any {
	z := j.Spec.Size
	var share [][]any
	if z.ShareMilli() > 0 {
		share = [][]any{{"gpu_share", z.GPUShare}}
	}
	if !z.Sized() {
		return share
	}
	rows := append([][]any{{"slots", z.SlotCount()}}, share...)
	if z.Gang() {
		rows = append(rows, []any{"replicas", fmt.Sprintf("%d (%d slots in all)", z.Members(), z.TotalSlots())})
	}
	if z.CPUs > 0 {
		rows = append(rows, []any{"cpus", z.CPUs})
	}
	if z.Memory > 0 {
		rows = append(rows, []any{"memory", z.Memory})
	}
	for _, k := range slices.Sorted(maps.Keys(z.Requires)) {
		rows = append(rows, []any{"requires " + k, z.Requires[k]})
	}
	placed := "waiting for placement"
	switch {
	case len(j.Placed) > 0:
		placed = strings.Join(j.Placed, ", ")
	case j.State != jobs.StateQueued:
		placed = "-"
	}
	return append(rows, []any{"placed on", placed})
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
