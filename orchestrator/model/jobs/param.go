package jobs

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParamType is the type of a template parameter.
type ParamType string

// The parameter types a template may declare.
const (
	ParamString ParamType = "string"
	ParamInt    ParamType = "int"
	ParamFloat  ParamType = "float"
	ParamBool   ParamType = "bool"
	ParamEnum   ParamType = "enum"
)

// MaxStringParamBytes bounds a string parameter when the template sets no max_len.
const MaxStringParamBytes = 4096

// ParamSpec declares one typed parameter of a template.
type ParamSpec struct {
	Type     ParamType `yaml:"type" json:"type"`
	Required bool      `yaml:"required,omitempty" json:"required,omitempty"`
	// Default is used when the submission omits the parameter. Required and
	// Default together are refused: a required parameter with a default is not
	// required.
	Default any `yaml:"default,omitempty" json:"default,omitempty"`
	// Min and Max bound int and float values (inclusive).
	Min *float64 `yaml:"min,omitempty" json:"min,omitempty"`
	Max *float64 `yaml:"max,omitempty" json:"max,omitempty"`
	// Values lists the allowed values of an enum.
	Values []string `yaml:"values,omitempty" json:"values,omitempty"`
	// MaxLen bounds a string's length in bytes (default MaxStringParamBytes).
	MaxLen int `yaml:"max_len,omitempty" json:"max_len,omitempty"`
	// Description is shown by the CLI and the API.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
}

// validate checks the declaration itself; field is its config path.
func (p ParamSpec) validate(field string, ps *problems) {
	switch p.Type {
	case ParamString, ParamInt, ParamFloat, ParamBool:
		if len(p.Values) > 0 {
			ps.add(field+".values", "values are only for type enum")
		}
	case ParamEnum:
		if len(p.Values) == 0 {
			ps.add(field+".values", "an enum needs at least one value")
		}
		seen := map[string]bool{}
		for _, v := range p.Values {
			if seen[v] {
				ps.add(field+".values", fmt.Sprintf("value %q is listed twice", v))
			}
			seen[v] = true
		}
	case "":
		ps.add(field+".type", "missing (use string, int, float, bool or enum)")
		return
	default:
		ps.add(field+".type", fmt.Sprintf("unknown type %q (use string, int, float, bool or enum)", p.Type))
		return
	}
	if (p.Min != nil || p.Max != nil) && p.Type != ParamInt && p.Type != ParamFloat {
		ps.add(field, "min and max are only for int and float")
	}
	if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
		ps.add(field+".min", fmt.Sprintf("min %v is above max %v", *p.Min, *p.Max))
	}
	if p.MaxLen < 0 {
		ps.add(field+".max_len", "must not be negative")
	}
	if p.Required && p.Default != nil {
		ps.add(field+".default", "a required parameter cannot have a default; drop one of them")
	}
	if p.Default != nil {
		if _, err := p.coerceDefault(p.Default); err != nil {
			ps.add(field+".default", err.Error())
		}
	}
}

// coerceDefault checks a default written in YAML, whose decoder yields int,
// float64, bool or string.
func (p ParamSpec) coerceDefault(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("default %v cannot be used: %v", v, err)
	}
	return p.Check(b)
}

// Check validates a JSON value against the declaration and returns it
// normalised: int64, float64, bool or string. The error says what to send.
func (p ParamSpec) Check(raw json.RawMessage) (any, error) {
	s := strings.TrimSpace(string(raw))
	if s == "null" || s == "" {
		return nil, fmt.Errorf("must not be null")
	}
	switch p.Type {
	case ParamString, ParamEnum:
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("must be a string, got %s", describeJSON(s))
		}
		if p.Type == ParamEnum {
			for _, allowed := range p.Values {
				if v == allowed {
					return v, nil
				}
			}
			return nil, fmt.Errorf("%q is not one of %s", v, strings.Join(p.Values, ", "))
		}
		if msg := CheckText(v, TextControls); msg != "" {
			return nil, fmt.Errorf("%s", msg)
		}
		limit := p.MaxLen
		if limit == 0 {
			limit = MaxStringParamBytes
		}
		if len(v) > limit {
			return nil, fmt.Errorf("is %d bytes long, the limit is %d", len(v), limit)
		}
		return v, nil
	case ParamBool:
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("must be true or false, got %s", describeJSON(s))
		}
		return v, nil
	case ParamInt:
		if !isJSONNumber(s) {
			return nil, fmt.Errorf("must be an integer, got %s", describeJSON(s))
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				v = int64(f) // 1e3 or 10.0 are integers written differently
			} else {
				return nil, fmt.Errorf("must be an integer, got %s", s)
			}
		}
		if err := p.checkBounds(float64(v)); err != nil {
			return nil, err
		}
		return v, nil
	case ParamFloat:
		if !isJSONNumber(s) {
			return nil, fmt.Errorf("must be a number, got %s", describeJSON(s))
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("must be a finite number, got %s", s)
		}
		if err := p.checkBounds(v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return nil, fmt.Errorf("has undeclared type %q", p.Type)
}

func (p ParamSpec) checkBounds(v float64) error {
	if p.Min != nil && v < *p.Min {
		return fmt.Errorf("%v is below the minimum %v", v, *p.Min)
	}
	if p.Max != nil && v > *p.Max {
		return fmt.Errorf("%v is above the maximum %v", v, *p.Max)
	}
	return nil
}

func isJSONNumber(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c == '-' || (c >= '0' && c <= '9')
}

// describeJSON names the JSON kind of a value for error messages.
func describeJSON(s string) string {
	switch {
	case s == "true" || s == "false":
		return "a boolean"
	case strings.HasPrefix(s, `"`):
		if len(s) > 40 {
			return "a string"
		}
		return "the string " + s
	case strings.HasPrefix(s, "{"):
		return "an object"
	case strings.HasPrefix(s, "["):
		return "an array"
	case isJSONNumber(s):
		return "the number " + s
	}
	return s
}

// FormatParam renders a normalised value for a command line.
func FormatParam(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}
