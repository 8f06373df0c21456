package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/queues"
)

func runJobs(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && (args[0] == "show" || args[0] == "logs") {
		return runJobsOne(ctx, e, args[0], args[1:])
	}
	if len(args) > 0 && args[0] == "list" {
		args = args[1:]
	}
	fs := newFlags(e, "jobs", "jobs [list] [--state S] [--limit N] | jobs show ID | jobs logs ID")
	cfgPath := configFlag(fs)
	state := fs.String("state", "", "only jobs in this state: queued, running, succeeded, failed, cancelled")
	limit := fs.Int("limit", 20, "most jobs shown, newest first")
	out := outputFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if *state != "" && !jobs.State(*state).Valid() {
		return usageError{fmt.Sprintf("--state %q: use queued, running, succeeded, failed or cancelled", *state)}
	}
	store, closeFn, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	list, err := store.List(ctx, queues.ListOptions{Limit: *limit, State: jobs.State(*state)})
	if err != nil {
		return err
	}
	if *out == "json" {
		return writeJSON(e.out, list)
	}
	now := time.Now()
	rows := make([][]any, len(list))
	for i, j := range list {
		rows[i] = []any{j.ID, j.Spec.Template, j.State, j.Attempt, j.Queue, dash(j.Worker), ago(j.CreatedAt, now), dash(j.LastError)}
	}
	return table(e.out, "ID\tTEMPLATE\tSTATE\tATTEMPT\tQUEUE\tWORKER\tCREATED\tLAST ERROR", rows)
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
	store, closeFn, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	j, err := store.Get(ctx, id)
	if err != nil {
		return err
	}
	if verb == "show" {
		if *out == "json" {
			return writeJSON(e.out, j)
		}
		return showJob(e, j)
	}
	after := ""
	for {
		lines, err := store.Logs(ctx, id, after, 1000)
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
			if lines, _ := store.Logs(ctx, id, after, 1000); len(lines) == 0 {
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

func showJob(e *env, j jobs.Job) error {
	now := time.Now()
	code := "-"
	if j.ExitCode != nil {
		code = fmt.Sprint(*j.ExitCode)
	}
	rows := [][]any{
		{"id", j.ID}, {"template", dash(j.Spec.Template)}, {"command", dash(strings.Join(j.Spec.Command, " "))},
		{"class", j.Spec.Class}, {"team", dash(j.Spec.Team)}, {"state", j.State}, {"attempt", j.Attempt},
		{"queue", j.Queue}, {"worker", dash(j.Worker)}, {"retries", j.Retries}, {"requeues", j.Requeues},
		{"checkpoint", dash(j.Checkpoint)}, {"exit code", code}, {"last error", dash(j.LastError)},
		{"created", ago(j.CreatedAt, now)}, {"started", ago(j.StartedAt, now)}, {"finished", ago(j.FinishedAt, now)},
		{"timeout", j.Spec.Timeout}, {"checkpointable", j.Spec.Checkpointable}, {"retryable", j.Spec.Retryable},
	}
	for _, k := range sortedKeys(j.Spec.Params) {
		rows = append(rows, []any{"param " + k, fmt.Sprint(j.Spec.Params[k])})
	}
	rows = append(rows, qosRows(j)...)
	return table(e.out, "FIELD\tVALUE", rows)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
