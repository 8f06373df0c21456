package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/logs"
)

// stderrTail is how many of a failed job's last stderr lines `--wait`
// prints: enough for a stack trace's end, few enough to read.
const stderrTail = 20

// jobEndedError is the end of a followed job that did not succeed.
type jobEndedError struct {
	id    string
	state jobs.State
}

func (e jobEndedError) Error() string { return fmt.Sprintf("job %s %s", e.id, e.state) }

// waitResult turns how a followed job ended into what the command says and
// its exit status, so scripts can use `submit --wait` like running the job
// itself: a failed job's stderr tail goes to stderr and the command exits
// with the job's exit code (1 when the job has none: killed, timed out,
// cancelled). err is what follow returned.
func waitResult(ctx context.Context, e *env, cfg config.Config, id string, err error) error {
	var ended jobEndedError
	if !errors.As(err, &ended) {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	code, reason := 1, ""
	// The record is read from Redis when this config reaches it; a
	// submitter allowed only NATS still gets the exit code from the
	// status request, and a hint where the logs are.
	store, closeStore, serr := storeFor(ctx, cfg)
	if serr == nil {
		defer closeStore()
		if j, err := store.Get(ctx, id); err == nil {
			code, reason = exitStatus(j.ExitCode), j.LastError
			printStderrTail(ctx, e, store, j)
		}
	} else if nc, nerr := connectNATS(cfg, "ballast-wait"); nerr == nil {
		defer nc.Close()
		if st, err := client.NewNATS(nc, subjects(cfg)).Status(ctx, id); err == nil {
			code, reason = exitStatus(st.ExitCode), st.LastError
		}
		fmt.Fprintf(e.errOut, "(its output: ballast jobs logs %s, from a machine that reaches Redis)\n", id)
	}
	msg := ended.Error()
	if reason != "" {
		msg += ": " + reason
	}
	return exitError{code: code, msg: msg}
}

// exitStatus is the command's exit status for a job's exit code: the code
// itself when it is a failing one, else 1.
func exitStatus(code *int) int {
	if code == nil || *code <= 0 || *code > 255 {
		return 1
	}
	return *code
}

// printStderrTail prints the last stderr lines of the job's last attempt.
func printStderrTail(ctx context.Context, e *env, store *queues.Store, j jobs.Job) {
	var tail []string
	after := ""
	for {
		lines, err := logs.New(store).Logs(ctx, j.ID, after, 1000)
		if err != nil {
			return
		}
		for _, l := range lines {
			after = l.ID
			if l.Stream == "stderr" && l.Attempt == j.Attempt {
				tail = append(tail, l.Text)
				if len(tail) > stderrTail {
					tail = tail[1:]
				}
			}
		}
		if len(lines) < 1000 {
			break
		}
	}
	if len(tail) == 0 {
		fmt.Fprintf(e.errOut, "job %s wrote nothing to stderr (all its output: ballast jobs logs %s)\n", j.ID, j.ID)
		return
	}
	fmt.Fprintf(e.errOut, "--- last %d stderr lines of job %s, attempt %d (all: ballast jobs logs %s) ---\n", len(tail), j.ID, j.Attempt, j.ID)
	for _, t := range tail {
		fmt.Fprintln(e.errOut, t)
	}
	fmt.Fprintln(e.errOut, "---")
}
