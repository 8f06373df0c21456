package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

// env carries the writers of one invocation.
type env struct {
	out, errOut io.Writer
}

// usageError marks errors in how a command was called (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func commands() map[string]command {
	return map[string]command{
		"dev":             {"run everything in one process on embedded defaults", runDev},
		"controller":      {"run the control loop, the NATS intake and the HTTP API", runController},
		"worker":          {"run a worker for one pool", runWorker},
		"submit":          {"submit a job: ballast submit TEMPLATE [name=value ...]", runSubmit},
		"jobs":            {"list jobs, or: jobs show ID | jobs logs ID", runJobs},
		"cancel":          {"cancel a job: ballast cancel ID", runCancel},
		"pipelines":       {"list pipelines, or: pipelines runs NAME | show RUN | trigger NAME | cancel RUN", runPipelines},
		"sweep":           {"parameter sweeps: sweep submit FILE | show ID | cancel ID | list", runSweep},
		"status":          {"show workers, queues and recent jobs", runStatus},
		"screenshot":      {"open the controller's dashboard in headless Chromium and write a PNG of it", runScreenshot},
		"validate-config": {"check a config file and report every problem with its line", runValidateConfig},
		"example-job":     {"a checkpointing demo job that counts steps (used by the steps template)", runExampleJob},
		"bench":           {"measure throughput and start latency against raw asynq", runBench},
		"bench-hybrid":    {"measure the hybrid controller's reclaim, scale-up and release reactions", runBenchHybrid},
		"chaos":           {"inject failures: chaos spot-notice WORKER | chaos run (a whole installation under faults, counted)", runChaos},
		"simulate":        {"replay a trace through the live policy: all-fixed, all-elastic, hybrid and tuned hybrid side by side", runSimulate},
		"plan":            {"size the fixed quota from a trace or the job history, three ways, with an HTML report", runPlan},
		"cost":            {"what a window cost, by pool, team, template, day or job, from the usage records", runCost},
		"top":             {"the dashboard in the terminal: pools, key measures, today's cost, workers, queues, running jobs, advice", runTop},
		"advise":          {"what to change (quota, watermarks, where templates run), from the last window of job records and idle samples", runAdvise},
		"trace":           {"write a trace as CSV: synthetic, imported from a public trace, or from the job history", runTrace},
	}
}

// Run executes one ballast invocation and returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{out: stdout, errOut: stderr}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "ballast: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := cmd.run(ctx, e, args[1:])
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ballast %s: %s\n", args[0], ue.msg)
		return 2
	}
	fmt.Fprintf(stderr, "ballast %s: %v\n", args[0], err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "ballast: one scheduling pool over fixed quota and elastic capacity.")
	fmt.Fprintln(w, "\nUsage: ballast COMMAND [flags]\n\nCommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-16s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'ballast COMMAND -h' for a command's flags.")
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.errOut)
	fs.Usage = func() {
		fmt.Fprintf(e.errOut, "Usage: ballast %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags wherever they stand among the positional arguments
// (`submit hello name=you --wait` as well as `submit --wait hello name=you`),
// turning a parse failure into a usage error. Everything after "--" is
// positional.
func parse(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		dash := indexOf(args, "--")
		head := args
		if dash >= 0 {
			head = args[:dash]
		}
		if err := fs.Parse(head); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usageError{strings.TrimSpace(err.Error())}
		}
		rest := fs.Args()
		if len(rest) > 0 {
			pos = append(pos, rest[0])
			next := append([]string(nil), rest[1:]...)
			if dash >= 0 {
				next = append(next, args[dash:]...) // keep the "--" for the next round
			}
			args = next
			continue
		}
		pos = append(pos, tail(args, dash)...)
		break
	}
	// Leave the positional arguments where fs.Args finds them.
	return fs.Parse(append([]string{"--"}, pos...))
}

func indexOf(args []string, s string) int {
	for i, a := range args {
		if a == s {
			return i
		}
	}
	return -1
}

// tail returns what follows the "--" at index dash (none if dash < 0).
func tail(args []string, dash int) []string {
	if dash < 0 {
		return nil
	}
	return args[dash+1:]
}
