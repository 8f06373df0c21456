package config

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a config file and where it is.
type Problem struct {
	// File is the name the config was loaded from.
	File string
	// Line and Column are 1-based; 0 when the position is unknown.
	Line, Column int
	// Field is the dotted path, such as "pools.spot.billing"; empty for
	// syntax errors.
	Field string
	// Message says what is wrong and how to fix it.
	Message string
	// Err is the underlying error (a *jobs.FieldError for validation
	// problems), for errors.Is and errors.As.
	Err error
}

// Error formats the problem as FILE:LINE:COL: field: message, the form
// editors and CI logs turn into links.
func (p *Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Column > 0 {
			fmt.Fprintf(&b, ":%d", p.Column)
		}
	}
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Unwrap exposes the underlying error.
func (p *Problem) Unwrap() error { return p.Err }

// Problems is every problem found in one config file, in file order. Its
// Error has one problem per line, so `ballast validate-config` can print it
// as it is.
type Problems []*Problem

// Error lists the problems, one per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.Is and errors.As see each problem.
func (ps Problems) Unwrap() []error {
	out := make([]error, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

// sortByPosition orders problems as they appear in the file. Problems without
// a position concern the whole file and come first.
func (ps Problems) sortByPosition() {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Column < ps[j].Column
	})
}
