package jobs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// AnyOf separates the values a requirement accepts: gpu_model
// "V100M16|V100M32" is met by a worker reporting either. A config writes
// it as a list (requires: {gpu_model: [V100M16, V100M32]}); records,
// traces and the policy carry the joined form, so one string compares
// everywhere. A worker's own label value may not hold it.
const AnyOf = "|"

// Requires are the labels a job requires of every worker it runs on, by
// key; a value may name several acceptable values (see AnyOf).
type Requires map[string]string

// UnmarshalYAML reads each requirement as one value or a list of values
// (the older callback form, so this package needs no YAML import).
func (r *Requires) UnmarshalYAML(unmarshal func(any) error) error {
	var raw map[string]any
	if err := unmarshal(&raw); err != nil {
		return err
	}
	out := make(Requires, len(raw))
	for k, v := range raw {
		switch v := v.(type) {
		case string:
			out[k] = v
		case []any:
			vals := make([]string, 0, len(v))
			for _, x := range v {
				s, ok := x.(string)
				if !ok {
					return fmt.Errorf("requires.%s: list %v holds %v; give the values workers report, as strings", k, v, x)
				}
				vals = append(vals, s)
			}
			if len(vals) == 0 {
				return fmt.Errorf("requires.%s: an empty list accepts no worker; give at least one value", k)
			}
			out[k] = strings.Join(vals, AnyOf)
		default:
			return fmt.Errorf("requires.%s: %v is neither a value nor a list of values", k, v)
		}
	}
	*r = out
	return nil
}

// Accepts reports whether a worker label of value have meets the
// requirement want: equal to it, or to one of its alternatives.
func Accepts(want, have string) bool {
	if want == have {
		return true
	}
	for alt := range strings.SplitSeq(want, AnyOf) {
		if alt == have {
			return true
		}
	}
	return false
}

// Carries reports whether labels meet every requirement of req.
func Carries(labels map[string]string, req map[string]string) bool {
	for k, want := range req {
		have, ok := labels[k]
		if !ok || !Accepts(want, have) {
			return false
		}
	}
	return true
}

// requireProblem says what is wrong with a requirement: each alternative
// must be a value a worker can report.
func requireProblem(k, v string) string {
	for alt := range strings.SplitSeq(v, AnyOf) {
		if msg := LabelProblem(k, alt); msg != "" {
			if strings.Contains(v, AnyOf) {
				return fmt.Sprintf("the value %q of the list: %s", alt, msg)
			}
			return msg
		}
	}
	return ""
}

// LabelsKey writes a label set as one string, keys sorted ("k=v;k2=v2;"),
// so sets compare and can key a map: equal sets, equal keys.
func LabelsKey(l map[string]string) string {
	if len(l) == 0 {
		return ""
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(l)) {
		b.WriteString(k + "=" + l[k] + ";")
	}
	return b.String()
}
