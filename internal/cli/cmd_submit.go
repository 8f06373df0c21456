package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func runSubmit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "submit", "submit [flags] TEMPLATE [name=value ...]")
	cfgPath := configFlag(fs)
	natsURL := fs.String("nats", "", "NATS URL (default: the config's nats.url)")
	httpURL := fs.String("http", "", "submit over the HTTP API at this base URL instead of NATS")
	token := fs.String("token", "", "API token for --http (default $BALLAST_API_TOKEN)")
	key := fs.String("key", "", "idempotency key: resubmitting with the same key returns the same job")
	team := fs.String("team", "", "team charged for the job (default: the template's)")
	class := fs.String("class", "", "override the class: core or burst")
	timeout := fs.String("timeout", "", "override the timeout, e.g. 2h")
	wait := fs.Bool("wait", false, "follow the job's events until it ends (NATS only)")
	slots := fs.Int("slots", 0, "override the slots (GPUs) per member, up to the template's max_slots")
	gpuShare := fs.Float64("gpu-share", 0, "ask for this share of one GPU (above 0, below 1, such as 0.5) instead of whole GPUs")
	file := fs.String("file", "", "submit every job of this JSON Lines file (one submission object per line; - reads stdin) as batches")
	out := outputFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if *file != "" {
		if fs.NArg() > 0 || *key != "" || *team != "" || *class != "" || *timeout != "" || *wait || flagSet(fs, "slots") || flagSet(fs, "gpu-share") {
			return usageError{"--file takes its jobs, keys and overrides from the file's lines: give no TEMPLATE, --key, --team, --class, --timeout, --slots, --gpu-share or --wait with it"}
		}
		return submitFile(ctx, e, *cfgPath, *file, *natsURL, *httpURL, *token, *out)
	}
	if fs.NArg() < 1 {
		return usageError{"name a template: ballast submit TEMPLATE [name=value ...]"}
	}
	sub := jobs.Submission{Template: fs.Arg(0), IdempotencyKey: *key, Team: *team, Class: *class}
	params, err := parseParams(fs.Args()[1:])
	if err != nil {
		return err
	}
	sub.Params = params
	// Sent only when given, so the template's own size stands otherwise;
	// the intake checks them and names the field.
	if flagSet(fs, "slots") {
		sub.Slots = slots
	}
	if flagSet(fs, "gpu-share") {
		sub.GPUShare = gpuShare
	}
	if *timeout != "" {
		var d jobs.Duration
		if err := d.UnmarshalText([]byte(*timeout)); err != nil {
			return usageError{"--timeout: " + err.Error()}
		}
		sub.Timeout = &d
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if *natsURL != "" {
		cfg.NATS.URL = *natsURL
	}

	var receipt intake.Receipt
	if *httpURL != "" {
		if *wait {
			return usageError{"--wait needs NATS; drop --http"}
		}
		tok := *token
		if tok == "" {
			tok, _ = cfg.HTTP.Token()
		}
		receipt, err = client.NewHTTP(*httpURL, tok, &http.Client{Timeout: 30 * time.Second}).Submit(ctx, sub)
		if err != nil {
			return explain(err)
		}
		return printReceipt(e, *out, receipt)
	}
	nc, err := connectNATS(cfg, "ballast-submit")
	if err != nil {
		return err
	}
	defer nc.Close()
	subj := subjects(cfg)
	receipt, err = client.NewNATS(nc, subj).Submit(ctx, sub)
	if err != nil {
		return explain(err)
	}
	if err := printReceipt(e, *out, receipt); err != nil || !*wait {
		return err
	}
	return waitResult(ctx, e, cfg, receipt.JobID, followJob(ctx, e, cfg, nc, receipt.JobID, *out))
}

// parseParams turns name=value pairs into JSON values: a value that parses as
// JSON (10, 0.5, true, "x", [1]) is sent as is, anything else as a string, so
// `epochs=10` is a number and `name=world` a string.
func parseParams(pairs []string) (map[string]json.RawMessage, error) {
	params := map[string]json.RawMessage{}
	for _, p := range pairs {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, usageError{fmt.Sprintf("parameter %q: write name=value", p)}
		}
		if _, dup := params[name]; dup {
			return nil, usageError{fmt.Sprintf("parameter %q is given twice", name)}
		}
		if json.Valid([]byte(value)) && value != "" {
			params[name] = json.RawMessage(value)
			continue
		}
		b, _ := json.Marshal(value)
		params[name] = b
	}
	return params, nil
}

// explain formats a submission error with every field problem on its own line.
func explain(err error) error {
	var ce *client.Error
	if !errors.As(err, &ce) || len(ce.Problems) == 0 {
		return err
	}
	var b strings.Builder
	b.WriteString(ce.Message)
	for _, p := range ce.Problems {
		fmt.Fprintf(&b, "\n  %s: %s", p.Field, p.Message)
	}
	return fmt.Errorf("%s", b.String())
}

func printReceipt(e *env, out string, r intake.Receipt) error {
	if r.Warning != "" {
		fmt.Fprintf(e.errOut, "warning: %s\n", r.Warning)
	}
	if out == "json" {
		return writeJSON(e.out, r)
	}
	note := ""
	if r.Duplicate {
		note = " (existing job for this idempotency key)"
	}
	_, err := fmt.Fprintf(e.out, "job %s %s in queue %s%s\n", r.JobID, r.State, r.Queue, note)
	return err
}

// followPoll is how often `submit --wait` reads the job's record besides
// following its events: an event can be lost (a publisher that crashed
// between its write and its publish), the record cannot, so a lost event
// delays the wait by this much at most.
const followPoll = 2 * time.Second

// follow prints a job's events, past and live, until it reaches a terminal
// state, which it also learns from the record every followPoll. A
// connection allowed to submit but not to read events (the least-privilege
// submitter) is followed through the record alone.
func follow(ctx context.Context, e *env, nc *nats.Conn, stream string, subj events.Subjects, id, out string, tail *outputTail) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The job's last lines are written before its end is recorded, so one
	// read after the end prints them all.
	defer tail.pump(context.WithoutCancel(ctx))
	var outTick <-chan time.Time
	if tail != nil && tail.logs != nil {
		t := time.NewTicker(outputPoll)
		defer t.Stop()
		outTick = t.C
	}
	var evs <-chan events.Event
	js, err := jetstream.New(nc)
	if err == nil {
		evs, err = eventbus.Follow(ctx, nc, js, stream, subj, id)
	}
	if err != nil {
		fmt.Fprintf(e.errOut, "cannot follow the job's events (%v); reading its record every %s instead\n", err, followPoll)
	}
	status := client.NewNATS(nc, subj)
	failures := 0 // status requests failed in a row
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-outTick:
			tail.pump(ctx)
		case ev, ok := <-evs:
			if !ok {
				evs = nil // the record still ends the wait
				continue
			}
			if out == "json" {
				writeJSON(e.out, ev)
			} else {
				// Output written before this event shows before it.
				tail.pump(ctx)
				fmt.Fprintf(e.out, "%s  %-15s %s %s %s\n", ev.Time.Format("15:04:05.000"), ev.Type, runDeliveryText(ev.Runs, ev.Attempt), ev.Worker, ev.Reason)
			}
			if ev.State.Terminal() {
				return ended(id, ev.State)
			}
		case <-tick.C:
			pctx, pcancel := context.WithTimeout(ctx, followPoll)
			st, err := status.Status(pctx, id)
			pcancel()
			var ce *client.Error
			switch {
			case errors.As(err, &ce) && ce.Code == intake.CodeNotFound:
				return fmt.Errorf("job %s has no record any more (its retention ended, or Redis lost it): %w", id, err)
			case err != nil:
				failures++
				if failures == maxStatusFailures {
					fmt.Fprintf(e.errOut, "cannot read the job's record (%v); still waiting for its events\n", err)
				}
				if failures >= maxStatusFailures && evs == nil {
					return fmt.Errorf("neither events nor the job's record can be read: %w", err)
				}
				continue
			case !st.State.Terminal():
				failures = 0
				continue // the next tick asks again; events may come first
			}
			if out == "json" {
				writeJSON(e.out, st)
			} else {
				fmt.Fprintf(e.out, "%s  %-15s %s %s %s (from the job's record)\n", st.FinishedAt.Local().Format("15:04:05.000"),
					"job."+string(st.State), runDeliveryText(st.Runs, st.Attempt), st.Worker, st.LastError)
			}
			return ended(id, st.State)
		}
	}
}

// followJob is follow with the job's output streamed in text mode; JSON
// mode carries events only, so that its readers see one kind of object.
func followJob(ctx context.Context, e *env, cfg config.Config, nc *nats.Conn, id, out string) error {
	var tail *outputTail
	if out != "json" {
		tail = newOutputTail(ctx, e, cfg, id)
		defer tail.Close()
	}
	return follow(ctx, e, nc, cfg.NATS.Stream, subjects(cfg), id, out, tail)
}

// maxStatusFailures is how many status requests in a row may fail before
// `submit --wait` says so, and gives up when it has no events either.
const maxStatusFailures = 5

// ended is the result of `submit --wait` for a job that reached state.
func ended(id string, state jobs.State) error {
	if state != jobs.StateSucceeded {
		return jobEndedError{id, state}
	}
	return nil
}
