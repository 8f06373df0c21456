package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
)

// CheckArgs reports whether args, a command line after the binary's name,
// would get past ballast's argument parsing, without running anything: the
// command (and its verb, for commands that take one) exists, and every
// flag is one the command defines, with a value of the right type. It
// does not judge positional arguments or values only the command itself
// checks later (an -o format, a duration that must be positive). tools are
// the commands the binary adds, as for RunWith. The docs' tests use it so
// that the commands the documentation shows cannot drift from the CLI.
//
// It asks for the command's help as `CMD ARGS --help` does: every flag set
// parses what comes before the --help, then stops at it with
// flag.ErrHelp. The context it passes is already cancelled, as
// completion's probe does, so a command that reached further would stop.
func CheckArgs(args []string, tools map[string]Tool) error {
	if len(args) == 0 {
		return errors.New("no command")
	}
	switch {
	case args[0] == "--version" || args[0] == "-version" || isHelpFlag(args[0]):
		return nil
	case args[0] == "help":
		if len(args) == 1 {
			return nil
		}
		return CheckArgs(args[1:], tools)
	}
	e := &env{out: io.Discard, errOut: io.Discard, help: true, tools: tools}
	cmds := e.commands()
	cmd, ok := cmds[args[0]]
	if !ok {
		if s := closest(args[0], slices.Sorted(maps.Keys(cmds))); s != "" {
			return fmt.Errorf("unknown command %q: did you mean %s?", args[0], s)
		}
		return fmt.Errorf("unknown command %q", args[0])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := cmd.run(ctx, e, withHelpFlag(args[1:]))
	var ue usageError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		// ErrHelp: a flag set parsed everything before --help. nil: a
		// command that prints its own usage when asked (sweep).
		return nil
	case errors.As(err, &ue):
		return fmt.Errorf("ballast %s: %s", args[0], ue.msg)
	}
	return fmt.Errorf("ballast %s did not stop at --help: %v", args[0], err)
}

// withHelpFlag returns args with --help added where a flag set reads it:
// before any "--", after which it would be a positional argument.
func withHelpFlag(args []string) []string {
	out := make([]string, 0, len(args)+1)
	if dash := indexOf(args, "--"); dash >= 0 {
		out = append(append(append(out, args[:dash]...), "--help"), args[dash:]...)
		return out
	}
	return append(append(out, args...), "--help")
}
