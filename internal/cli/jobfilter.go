package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// labelFlag collects repeated --label KEY=VALUE flags.
type labelFlag struct{ m map[string]string }

func (l *labelFlag) String() string {
	if l == nil || len(l.m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l.m)) {
		parts = append(parts, k+"="+l.m[k])
	}
	return strings.Join(parts, ",")
}

func (l *labelFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("write KEY=VALUE, not %q", s)
	}
	if l.m == nil {
		l.m = map[string]string{}
	}
	l.m[k] = v
	return nil
}

// parseSince reads --since: a duration back from now ("2h") or an
// absolute RFC 3339 time, the two ways people say "since".
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q is negative; write how far back, such as 2h", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (2h, 30m) nor an RFC 3339 time (2026-12-01T09:00:00Z)", s)
}
