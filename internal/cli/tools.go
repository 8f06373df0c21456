package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/ballastdev/ballast/internal/config"
)

// Tool is a command that a binary other than ballast adds to ballast's
// own: cmd/ballast-tools adds the benchmarks and the headless-browser
// screenshot, whose dependencies (a Chrome DevTools driver among them)
// production machines have no use for. A tool gets the same flag parsing,
// config discovery and error reporting as a built-in command.
type Tool struct {
	// Summary is the one line `help` shows.
	Summary string
	// Run runs the tool; an error from UsageError exits 2, others 1.
	Run func(ctx context.Context, inv *Invocation, args []string) error
}

// Invocation is what a Tool sees of one run of the binary.
type Invocation struct{ e *env }

// Stdout and Stderr are the invocation's writers.
func (inv *Invocation) Stdout() io.Writer { return inv.e.out }

// Stderr is where notices and progress go.
func (inv *Invocation) Stderr() io.Writer { return inv.e.errOut }

// Flags returns a flag set for the tool, which Parse parses: synopsis is
// the usage line after "ballast ".
func (inv *Invocation) Flags(name, synopsis string) *flag.FlagSet {
	return newFlags(inv.e, name, synopsis)
}

// Parse parses args into fs as built-in commands do: flags anywhere among
// the positional arguments, did-you-mean for a mistyped flag, and config
// discovery for a --config flag from ConfigFlag.
func (inv *Invocation) Parse(fs *flag.FlagSet, args []string) error { return parse(fs, args) }

// ConfigFlag registers --config on fs, filled in by discovery at Parse.
func ConfigFlag(fs *flag.FlagSet) *string { return configFlag(fs) }

// LoadConfig reads the config file at path, or the built-in defaults for "".
func LoadConfig(path string) (config.Config, error) { return loadConfig(path) }

// UsageError is an error in how a command was called: it exits 2.
func UsageError(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// RunWith is Run for a binary that adds tools to ballast's commands.
func RunWith(ctx context.Context, args []string, stdout, stderr io.Writer, tools map[string]Tool) int {
	return runCLI(ctx, args, stdout, stderr, tools)
}

// toolNames are the commands only ballast-tools has, so that the ballast
// binary can say where they went rather than call them unknown.
var toolNames = map[string]bool{"screenshot": true, "bench": true, "bench-hybrid": true}
