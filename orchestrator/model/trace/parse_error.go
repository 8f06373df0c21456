package trace

import "fmt"

// ParseError is a problem at one place of a text input. Every reader returns
// one (wrapped in nothing) so callers can point a user at the exact cell.
type ParseError struct {
	Line   int    // 1-based line number in the input
	Column string // column name; empty when the whole line is at fault
	Err    error
}

// Error reads "line 12: duration_s: must be > 0".
func (e *ParseError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: %s: %v", e.Line, e.Column, e.Err)
}

// Unwrap returns the underlying problem.
func (e *ParseError) Unwrap() error { return e.Err }
