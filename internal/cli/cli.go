package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
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
	// help is set when the invocation asked for a command's help (`help
	// CMD` or `CMD --help`): the help then goes to stdout, as asked-for
	// output, and the exit status is 0.
	help bool
	// helpShown records that a flag set printed its usage, so Run knows a
	// command that never reached its flags still owes the reader some help.
	helpShown bool
	// color and errColor are set when stdout and stderr, respectively,
	// are a terminal and NO_COLOR is unset.
	color, errColor bool
	// flagSets collects every flag set the command built, so completion
	// scripts can list a command's flags without a second table of them.
	flagSets []*flag.FlagSet
	// tools are the commands this binary adds to ballast's (RunWith).
	tools map[string]Tool
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
		"retry":           {"submit a finished job again: ballast retry ID", runRetry},
		"templates":       {"list the templates jobs may name, or: templates show NAME", runTemplates},
		"completion":      {"print a shell completion script: completion bash|zsh|fish", runCompletion},
		"cancel":          {"cancel a job: ballast cancel ID", runCancel},
		"pipelines":       {"list pipelines, or: pipelines runs NAME | show RUN | trigger NAME | cancel RUN", runPipelines},
		"sweep":           {"parameter sweeps: sweep submit FILE | show ID | cancel ID | list", runSweep},
		"status":          {"show workers, queues and recent jobs", runStatus},
		"recover":         {"rebuild the jobs Redis lost from the event stream (--ack: only acknowledge the loss)", runRecover},
		"validate-config": {"check a config file and report every problem with its line", runValidateConfig},
		"migrate-keys":    {"rename a stopped installation's Redis keys to the hash-tagged layout (--dry-run to count)", runMigrateKeys},
		"example-job":     {"a checkpointing demo job that counts steps (used by the steps template)", runExampleJob},
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
	return runCLI(ctx, args, stdout, stderr, nil)
}

func runCLI(ctx context.Context, args []string, stdout, stderr io.Writer, tools map[string]Tool) int {
	e := &env{out: stdout, errOut: stderr, color: colorFor(stdout), errColor: colorFor(stderr), tools: tools}
	if len(args) > 0 && args[0] == "help" && len(args) > 1 {
		// `help CMD [VERB]` is `CMD [VERB] --help`, so the two cannot differ.
		args = append(append([]string(nil), args[1:]...), "--help")
	}
	switch {
	case len(args) == 0 || isHelpFlag(args[0]) || args[0] == "help":
		usage(stdout, tools)
		return 0
	case args[0] == "--version" || args[0] == "-version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	cmds := e.commands()
	cmd, ok := cmds[args[0]]
	if !ok && toolNames[args[0]] {
		fmt.Fprintf(stderr, "ballast: %s is a developer tool, not in the production binary: build it with\n"+
			"  go build -o bin/ballast-tools ./cmd/ballast-tools\nand run bin/ballast-tools %s.\n", args[0], args[0])
		return 2
	}
	if !ok {
		fmt.Fprintf(stderr, "ballast: unknown command %q", args[0])
		if s := closest(args[0], slices.Sorted(maps.Keys(cmds))); s != "" {
			fmt.Fprintf(stderr, ": did you mean %s?\nRun 'ballast help' for every command.\n", s)
			return 2
		}
		fmt.Fprint(stderr, "\n\n")
		usage(stderr, tools)
		return 2
	}
	e.help = wantsHelp(args[1:])
	err := cmd.run(ctx, e, args[1:])
	var ue usageError
	var ee exitError
	switch {
	case e.help && !e.helpShown && err != nil:
		// A command that reads a verb before its flags (chaos, sweep)
		// stops at the verb: say what it does and how it is called.
		fmt.Fprintf(stdout, "ballast %s: %s\n", args[0], cmd.summary)
		if errors.As(err, &ue) {
			fmt.Fprintln(stdout, ue.msg)
		}
		return 0
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %s\nRun 'ballast help %s' for its usage.\n", paintIf(e.errColor, red, "ballast "+args[0]), ue.msg, args[0])
		return 2
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintf(stderr, "%s: %s\n", paintIf(e.errColor, red, "ballast "+args[0]), ee.msg)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "%s: %v\n", paintIf(e.errColor, red, "ballast "+args[0]), err)
	return 1
}

// exitError ends a command with a chosen exit status, such as the exit code
// of the job `submit --wait` followed; msg, when set, goes to stderr.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// wantsHelp reports whether a command's arguments ask for its help before
// any "--" (after it, "-h" is a positional argument).
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelpFlag(a) {
			return true
		}
	}
	return false
}

// commands is the command table with this binary's tools added.
func (e *env) commands() map[string]command {
	cmds := commands()
	for name, t := range e.tools {
		run := t.Run
		cmds[name] = command{t.Summary, func(ctx context.Context, e *env, args []string) error {
			return run(ctx, &Invocation{e}, args)
		}}
	}
	return cmds
}

func usage(w io.Writer, tools map[string]Tool) {
	fmt.Fprintln(w, "ballast: one scheduling pool over fixed quota and elastic capacity.")
	fmt.Fprintln(w, "\nUsage: ballast COMMAND [flags]\n\nCommands:")
	cmds := (&env{tools: tools}).commands()
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
	// The full flag list is printed when asked for; a mistake gets one
	// line saying what was wrong and where the help is (see Run), not
	// the list scrolled past it.
	fs.Usage = func() {
		if !e.help {
			return
		}
		e.helpShown = true
		if c, ok := e.commands()[strings.Fields(name)[0]]; ok {
			fmt.Fprintf(e.out, "ballast %s: %s\n\n", name, c.summary)
		}
		fmt.Fprintf(e.out, "Usage: ballast %s\n", synopsis)
		prev := fs.Output()
		fs.SetOutput(e.out)
		fs.PrintDefaults()
		fs.SetOutput(prev)
	}
	e.flagSets = append(e.flagSets, fs)
	return fs
}

// parse parses flags wherever they stand among the positional arguments
// (`submit hello name=you --wait` as well as `submit --wait hello name=you`),
// turning a parse failure into a usage error. Everything after "--" is
// positional.
func parse(fs *flag.FlagSet, args []string) error {
	// The flag package prints each parse error itself; Run prints it
	// once, with a suggestion, so the package's copy is dropped.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	defer fs.SetOutput(out)
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
			return usageError{strings.TrimSpace(err.Error()) + flagHint(fs, err)}
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
	if err := fs.Parse(append([]string{"--"}, pos...)); err != nil {
		return err
	}
	return resolveConfigFlag(fs, out)
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
