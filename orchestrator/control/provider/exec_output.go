package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// maxQuotedLine is how much of a bad line an error quotes.
const maxQuotedLine = 200

// parseInstances reads the JSON-lines output of a launch or list script.
// Blank lines are skipped. pool, when set, is the pool a launch asked for:
// a line may leave its pool out, but may not name another. allowed limits
// the states a line may report. An instance without launched_at gets now
// (a launch passes the time of the call; a list passes the zero time, as it
// cannot know).
//
// It returns the good lines' instances even when some line is bad, with an
// error (matching ErrMalformedOutput) naming the first bad line: a launch
// that printed one garbled line still started the others.
func parseInstances(out []byte, pool string, allowed []State, now time.Time) ([]Instance, error) {
	var (
		res      []Instance
		firstErr error
		seen     = make(map[string]bool)
	)
	for i, line := range bytes.Split(out, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		in, err := parseLine(line, pool, allowed, now)
		if err == nil && seen[in.ID] {
			err = fmt.Errorf("instance %q reported twice", in.ID)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: output line %d: %v: %s", ErrMalformedOutput, i+1, err, quote(line))
			}
			continue
		}
		seen[in.ID] = true
		res = append(res, in)
	}
	return res, firstErr
}

// parseLine reads one instance line.
func parseLine(line []byte, pool string, allowed []State, now time.Time) (Instance, error) {
	var in Instance
	if err := json.Unmarshal(line, &in); err != nil {
		return in, fmt.Errorf("not a JSON instance object: %v", err)
	}
	if in.ID == "" {
		return in, fmt.Errorf(`no "id"`)
	}
	switch {
	case in.Pool == "" && pool != "":
		in.Pool = pool
	case in.Pool == "":
		return in, fmt.Errorf(`no "pool"`)
	case pool != "" && in.Pool != pool:
		return in, fmt.Errorf("pool %q, but %q was asked for", in.Pool, pool)
	}
	st, err := ParseState(string(in.State))
	if err != nil {
		return in, err
	}
	if !slices.Contains(allowed, st) {
		return in, fmt.Errorf("state %q not allowed here (want one of %v)", st, allowed)
	}
	in.State = st
	if in.LaunchedAt.IsZero() {
		in.LaunchedAt = now
	}
	return in, nil
}

// quote shortens a bad line for an error message. It is shown as is, not
// Go-quoted, so the JSON stays readable in logs.
func quote(line []byte) string {
	if len(line) > maxQuotedLine {
		return string(line[:maxQuotedLine]) + "..."
	}
	return string(line)
}
