package jobs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

type checkCase struct {
	name    string
	spec    ParamSpec
	raw     string
	want    any    // normalised value when wantErr is empty
	wantErr string // part of the error message
}

func runCheckCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.spec.Check(json.RawMessage(tc.raw))
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("Check(%s) = %#v, want an error containing %q", tc.raw, got, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Check(%s) error = %q, want it to contain %q", tc.raw, err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("Check(%s) returned value %#v alongside an error", tc.raw, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check(%s): unexpected error %v", tc.raw, err)
			}
			// DeepEqual also compares the dynamic type: int64 vs float64 matters.
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Check(%s) = %#v (%T), want %#v (%T)", tc.raw, got, got, tc.want, tc.want)
			}
		})
	}
}

func TestParamSpecCheckString(t *testing.T) {
	str := ParamSpec{Type: ParamString}
	short := ParamSpec{Type: ParamString, MaxLen: 5}
	atLimit := `"` + strings.Repeat("a", MaxStringParamBytes) + `"`
	overLimit := `"` + strings.Repeat("a", MaxStringParamBytes+1) + `"`
	runCheckCases(t, []checkCase{
		{"plain", str, `"hello"`, "hello", ""},
		{"empty string", str, `""`, "", ""},
		{"escapes decoded", str, `"a\nb\u00e9"`, "a\nb\u00e9", ""},
		{"shell metacharacters kept", str, `"; rm -rf /"`, "; rm -rf /", ""},
		{"surrounding whitespace", str, " \"x\"\n", "x", ""},
		{"default limit reached", str, atLimit, strings.Repeat("a", MaxStringParamBytes), ""},
		{"default limit exceeded", str, overLimit, nil, "is 4097 bytes long, the limit is 4096"},
		{"max_len reached", short, `"abcde"`, "abcde", ""},
		{"max_len exceeded", short, `"abcdef"`, nil, "is 6 bytes long, the limit is 5"},
		{"max_len counts bytes", short, `"h\u00e9llo"`, nil, "is 6 bytes long, the limit is 5"},
		{"number", str, `5`, nil, "must be a string, got the number 5"},
		{"bool", str, `true`, nil, "must be a string, got a boolean"},
		{"object", str, `{"a":1}`, nil, "must be a string, got an object"},
		{"array", str, `["a"]`, nil, "must be a string, got an array"},
		{"null", str, `null`, nil, "must not be null"},
		{"empty raw", str, ``, nil, "must not be null"},
	})
}

func TestParamSpecCheckInt(t *testing.T) {
	n := ParamSpec{Type: ParamInt}
	bounded := ParamSpec{Type: ParamInt, Min: ptr(1.0), Max: ptr(10.0)}
	runCheckCases(t, []checkCase{
		{"plain", n, `10`, int64(10), ""},
		{"zero", n, `0`, int64(0), ""},
		{"negative", n, `-7`, int64(-7), ""},
		{"exponent", n, `1e3`, int64(1000), ""},
		{"upper-case exponent", n, `2E2`, int64(200), ""},
		{"negative exponent form", n, `-1e3`, int64(-1000), ""},
		{"trailing .0", n, `10.0`, int64(10), ""},
		{"beyond float precision stays exact", n, `9007199254740993`, int64(9007199254740993), ""},
		{"fraction", n, `10.5`, nil, "must be an integer, got 10.5"},
		{"small fraction", n, `1e-3`, nil, "must be an integer, got 1e-3"},
		{"too large for int64", n, `1e300`, nil, "must be an integer, got 1e300"},
		{"int64 overflow", n, `9223372036854775808`, nil, "must be an integer"},
		{"string", n, `"10"`, nil, `must be an integer, got the string "10"`},
		{"long string", n, `"` + strings.Repeat("1", 50) + `"`, nil, "must be an integer, got a string"},
		{"bool", n, `true`, nil, "must be an integer, got a boolean"},
		{"null", n, `null`, nil, "must not be null"},
		{"object", n, `{}`, nil, "must be an integer, got an object"},
		{"array", n, `[1]`, nil, "must be an integer, got an array"},
		{"at min", bounded, `1`, int64(1), ""},
		{"at max", bounded, `10`, int64(10), ""},
		{"inside", bounded, `5`, int64(5), ""},
		{"below min", bounded, `0`, nil, "0 is below the minimum 1"},
		{"above max", bounded, `11`, nil, "11 is above the maximum 10"},
		{"above max via exponent", bounded, `1e2`, nil, "100 is above the maximum 10"},
		{"only min", ParamSpec{Type: ParamInt, Min: ptr(0.0)}, `-1`, nil, "below the minimum 0"},
		{"only max", ParamSpec{Type: ParamInt, Max: ptr(0.0)}, `1`, nil, "above the maximum 0"},
	})
}

func TestParamSpecCheckFloat(t *testing.T) {
	f := ParamSpec{Type: ParamFloat}
	unit := ParamSpec{Type: ParamFloat, Min: ptr(0.0), Max: ptr(1.0)}
	runCheckCases(t, []checkCase{
		{"fraction", f, `0.5`, 0.5, ""},
		{"integer written", f, `3`, 3.0, ""},
		{"exponent", f, `1e-3`, 0.001, ""},
		{"negative", f, `-2.5`, -2.5, ""},
		{"string", f, `"0.5"`, nil, `must be a number, got the string "0.5"`},
		{"bool", f, `false`, nil, "must be a number, got a boolean"},
		{"null", f, `null`, nil, "must not be null"},
		{"NaN", f, `NaN`, nil, "must be a number"},
		{"quoted NaN", f, `"NaN"`, nil, "must be a number"},
		{"Infinity", f, `Infinity`, nil, "must be a number"},
		{"negative Inf", f, `-Inf`, nil, "must be a finite number"},
		{"overflow", f, `1e400`, nil, "must be a finite number, got 1e400"},
		{"at min", unit, `0`, 0.0, ""},
		{"at max", unit, `1`, 1.0, ""},
		{"below min", unit, `-0.1`, nil, "-0.1 is below the minimum 0"},
		{"above max", unit, `1.5`, nil, "1.5 is above the maximum 1"},
	})
}

func TestParamSpecCheckBool(t *testing.T) {
	b := ParamSpec{Type: ParamBool}
	runCheckCases(t, []checkCase{
		{"true", b, `true`, true, ""},
		{"false", b, `false`, false, ""},
		{"string", b, `"true"`, nil, `must be true or false, got the string "true"`},
		{"number", b, `1`, nil, "must be true or false, got the number 1"},
		{"null", b, `null`, nil, "must not be null"},
	})
}

func TestParamSpecCheckEnum(t *testing.T) {
	e := ParamSpec{Type: ParamEnum, Values: []string{"fast", "full", "debug"}}
	runCheckCases(t, []checkCase{
		{"allowed first", e, `"fast"`, "fast", ""},
		{"allowed last", e, `"debug"`, "debug", ""},
		{"not allowed lists values", e, `"slow"`, nil, `"slow" is not one of fast, full, debug`},
		{"case matters", e, `"FAST"`, nil, `"FAST" is not one of fast, full, debug`},
		{"number", e, `1`, nil, "must be a string, got the number 1"},
		{"null", e, `null`, nil, "must not be null"},
	})
}

func TestParamSpecCheckUndeclaredType(t *testing.T) {
	runCheckCases(t, []checkCase{
		{"unknown type", ParamSpec{Type: "uuid"}, `"x"`, nil, `has undeclared type "uuid"`},
		{"empty type", ParamSpec{}, `1`, nil, `has undeclared type ""`},
	})
}

func TestFormatParam(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{"a b", "a b"},
		{"", ""},
		{int64(-42), "-42"},
		{int64(9007199254740993), "9007199254740993"},
		{0.01, "0.01"},
		{3.0, "3"},
		{1e21, "1e+21"},
		{true, "true"},
		{false, "false"},
		{7, "7"}, // not a normalised type: falls back to fmt
	}
	for _, tc := range cases {
		if got := FormatParam(tc.in); got != tc.want {
			t.Errorf("FormatParam(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDescribeJSON(t *testing.T) {
	cases := map[string]string{
		`true`:                              "a boolean",
		`false`:                             "a boolean",
		`"short"`:                           `the string "short"`,
		`"` + strings.Repeat("x", 40) + `"`: "a string",
		`{}`:                                "an object",
		`[]`:                                "an array",
		`-3`:                                "the number -3",
		`NaN`:                               "NaN",
	}
	for in, wantS := range cases {
		if got := describeJSON(in); got != wantS {
			t.Errorf("describeJSON(%s) = %q, want %q", in, got, wantS)
		}
	}
}
