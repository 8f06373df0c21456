package jobs

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration written as text ("90s", "6h") in YAML and JSON,
// because seconds-as-numbers are the commonest source of wrong timeouts.
type Duration time.Duration

// Std returns the value as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes the duration as text.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses "1h30m" style text.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return &durationError{fmt.Sprintf("%q is not a duration (write it like 90s, 30m or 6h)", string(b))}
	}
	*d = Duration(v)
	return nil
}

// UnmarshalJSON accepts only a string, so that a bare number (seconds? nanoseconds?)
// is refused instead of guessed.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &durationError{fmt.Sprintf("a duration must be a string like \"30m\", not %s", string(b))}
	}
	return d.UnmarshalText([]byte(s))
}

// durationError is a malformed duration. Its own type lets DecodeSubmission
// name the field ("timeout") instead of "body": encoding/json adds the field
// path only to its own type errors, not to errors from UnmarshalJSON.
type durationError struct{ msg string }

func (e *durationError) Error() string { return e.msg }
