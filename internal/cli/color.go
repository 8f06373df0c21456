package cli

import (
	"io"
	"os"
)

// ANSI colours, each the same length so that coloured cells keep a
// tabwriter's columns aligned (it counts the escape bytes as width).
const (
	red    = "\x1b[31m"
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
	grey   = "\x1b[90m"
	reset  = "\x1b[0m"
)

// colorFor reports whether output to w may be coloured: only on a
// terminal, and never when NO_COLOR is set (https://no-color.org) or the
// terminal is dumb. Output piped to a file or another program stays plain.
func colorFor(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && colorAllowed(os.Getenv("NO_COLOR"), os.Getenv("TERM"), fi.Mode()&os.ModeCharDevice != 0)
}

// colorAllowed is colorFor's decision, apart so it can be tested without
// a terminal.
func colorAllowed(noColor, term string, terminal bool) bool {
	return terminal && noColor == "" && term != "dumb"
}

// paint wraps s in colour c when this invocation colours its stdout.
func (e *env) paint(c, s string) string { return paintIf(e.color, c, s) }

func paintIf(on bool, c, s string) string {
	if !on {
		return s
	}
	return c + s + reset
}
