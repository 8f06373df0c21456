package jobs

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTemplateValidate(t *testing.T) {
	const f = "templates.t"
	cmd := []string{"run"}
	cases := []struct {
		name  string
		tmpl  Template
		wants []want // empty: valid
	}{
		{"minimal command", Template{Command: cmd}, nil},
		{"minimal handler", Template{Handler: "sleep"}, nil},
		{"everything valid", Template{
			Command: []string{"python", "train.py", "--epochs=${epochs}", "--lr=${lr}", "${mode}", "--data=${bucket}/${path}"},
			Params: map[string]ParamSpec{
				"epochs": {Type: ParamInt, Required: true, Min: ptr(1.0), Max: ptr(100.0)},
				"lr":     {Type: ParamFloat, Default: 0.1, Min: ptr(0.0), Max: ptr(1.0)},
				"mode":   {Type: ParamEnum, Values: []string{"fast", "full"}, Default: "fast"},
				"bucket": {Type: ParamString, Default: "s3://d", MaxLen: 64},
				"path":   {Type: ParamString},
				"dry":    {Type: ParamBool, Default: false},
				"count":  {Type: ParamInt, Default: 5.0}, // YAML may write an int as 5.0
				"_x9":    {Type: ParamInt, Default: 3},
			},
			Class: ClassCore, Rhythm: RhythmMixed, Checkpointable: true, Retryable: true,
			MaxRetries: ptr(MaxRetriesLimit), Timeout: Duration(MaxTimeout), Grace: Duration(MaxGrace),
			Team: "ml-platform.eu_1",
		}, nil},
		{"max_retries 0 without retryable", Template{Command: cmd, MaxRetries: ptr(0)}, nil},

		{"no command and no handler", Template{}, []want{{f + ".command", "missing: give the argv to run (or handler"}}},
		{"empty command slice", Template{Command: []string{}}, []want{{f + ".command", "missing"}}},
		{"command and handler", Template{Command: cmd, Handler: "h"}, []want{{f + ".handler", "give command or handler, not both"}}},
		{"empty program", Template{Command: []string{"  ", "x"}}, []want{{f + ".command[0]", "the program name is empty"}}},
		{"unknown class", Template{Command: cmd, Class: "gold"}, []want{{f + ".class", `unknown class "gold" (use core or burst)`}}},
		{"unknown rhythm", Template{Command: cmd, Rhythm: "daily"}, []want{{f + ".rhythm", `unknown rhythm "daily" (use periodic, pulse, mixed or sweep)`}}},
		{"negative timeout", Template{Command: cmd, Timeout: Duration(-time.Second)}, []want{{f + ".timeout", "must be between 0 (default 1h0m0s) and 168h0m0s"}}},
		{"timeout too large", Template{Command: cmd, Timeout: Duration(MaxTimeout + time.Second)}, []want{{f + ".timeout", "must be between 0"}}},
		{"negative grace", Template{Command: cmd, Grace: Duration(-time.Second)}, []want{{f + ".grace", "must be between 0 (default 30s) and 15m0s"}}},
		{"grace too large", Template{Command: cmd, Grace: Duration(MaxGrace + time.Second)}, []want{{f + ".grace", "must be between 0"}}},
		{"max_retries without retryable", Template{Command: cmd, MaxRetries: ptr(2)}, []want{{f + ".max_retries", "set retryable: true as well, or drop max_retries"}}},
		{"max_retries too large", Template{Command: cmd, Retryable: true, MaxRetries: ptr(MaxRetriesLimit + 1)}, []want{{f + ".max_retries", "must be between 0 and 100"}}},
		{"max_retries negative", Template{Command: cmd, Retryable: true, MaxRetries: ptr(-1)}, []want{{f + ".max_retries", "must be between 0 and 100"}}},
		{"bad team", Template{Command: cmd, Team: "ML Team"}, []want{{f + ".team", "use lower-case letters"}}},

		{"param name upper-case", Template{Command: cmd, Params: map[string]ParamSpec{"Epochs": {Type: ParamInt}}},
			[]want{{f + ".params.Epochs", "a parameter name uses lower-case letters"}}},
		{"param name starts with digit", Template{Command: cmd, Params: map[string]ParamSpec{"1st": {Type: ParamInt}}},
			[]want{{f + ".params.1st", "does not start with a digit"}}},
		{"param name with dash", Template{Command: cmd, Params: map[string]ParamSpec{"learning-rate": {Type: ParamFloat}}},
			[]want{{f + ".params.learning-rate", "a parameter name"}}},
		{"param name too long", Template{Command: cmd, Params: map[string]ParamSpec{strings.Repeat("p", 64): {Type: ParamInt}}},
			[]want{{f + ".params." + strings.Repeat("p", 64), "a parameter name"}}},
		{"param missing type", Template{Command: cmd, Params: map[string]ParamSpec{"x": {}}},
			[]want{{f + ".params.x.type", "missing (use string, int, float, bool or enum)"}}},
		{"param unknown type", Template{Command: cmd, Params: map[string]ParamSpec{"x": {Type: "uuid"}}},
			[]want{{f + ".params.x.type", `unknown type "uuid" (use string, int, float, bool or enum)`}}},
		{"enum without values", Template{Command: cmd, Params: map[string]ParamSpec{"mode": {Type: ParamEnum}}},
			[]want{{f + ".params.mode.values", "an enum needs at least one value"}}},
		{"enum duplicate value", Template{Command: cmd, Params: map[string]ParamSpec{"mode": {Type: ParamEnum, Values: []string{"a", "b", "a"}}}},
			[]want{{f + ".params.mode.values", `value "a" is listed twice`}}},
		{"values on a string", Template{Command: cmd, Params: map[string]ParamSpec{"s": {Type: ParamString, Values: []string{"a"}}}},
			[]want{{f + ".params.s.values", "values are only for type enum"}}},
		{"min greater than max", Template{Command: cmd, Params: map[string]ParamSpec{"n": {Type: ParamInt, Min: ptr(10.0), Max: ptr(1.0)}}},
			[]want{{f + ".params.n.min", "min 10 is above max 1"}}},
		{"float min greater than max", Template{Command: cmd, Params: map[string]ParamSpec{"r": {Type: ParamFloat, Min: ptr(0.5), Max: ptr(0.25)}}},
			[]want{{f + ".params.r.min", "min 0.5 is above max 0.25"}}},
		{"min on a string", Template{Command: cmd, Params: map[string]ParamSpec{"s": {Type: ParamString, Min: ptr(1.0)}}},
			[]want{{f + ".params.s", "min and max are only for int and float"}}},
		{"max on a bool", Template{Command: cmd, Params: map[string]ParamSpec{"b": {Type: ParamBool, Max: ptr(1.0)}}},
			[]want{{f + ".params.b", "min and max are only for int and float"}}},
		{"negative max_len", Template{Command: cmd, Params: map[string]ParamSpec{"s": {Type: ParamString, MaxLen: -1}}},
			[]want{{f + ".params.s.max_len", "must not be negative"}}},
		{"required with default", Template{Command: cmd, Params: map[string]ParamSpec{"n": {Type: ParamInt, Required: true, Default: 3}}},
			[]want{{f + ".params.n.default", "a required parameter cannot have a default"}}},
		{"default above max", Template{Command: cmd, Params: map[string]ParamSpec{"n": {Type: ParamInt, Max: ptr(10.0), Default: 11}}},
			[]want{{f + ".params.n.default", "11 is above the maximum 10"}}},
		{"default below min", Template{Command: cmd, Params: map[string]ParamSpec{"r": {Type: ParamFloat, Min: ptr(0.0), Default: -0.5}}},
			[]want{{f + ".params.r.default", "-0.5 is below the minimum 0"}}},
		{"default of the wrong type", Template{Command: cmd, Params: map[string]ParamSpec{"n": {Type: ParamInt, Default: "ten"}}},
			[]want{{f + ".params.n.default", `must be an integer, got the string "ten"`}}},
		{"fractional default for an int", Template{Command: cmd, Params: map[string]ParamSpec{"n": {Type: ParamInt, Default: 2.5}}},
			[]want{{f + ".params.n.default", "must be an integer"}}},
		{"enum default not a value", Template{Command: cmd, Params: map[string]ParamSpec{"m": {Type: ParamEnum, Values: []string{"a", "b"}, Default: "c"}}},
			[]want{{f + ".params.m.default", `"c" is not one of a, b`}}},
		{"string default too long", Template{Command: cmd, Params: map[string]ParamSpec{"s": {Type: ParamString, MaxLen: 2, Default: "abc"}}},
			[]want{{f + ".params.s.default", "the limit is 2"}}},
		{"default that cannot be encoded", Template{Command: cmd, Params: map[string]ParamSpec{"s": {Type: ParamString, Default: func() {}}}},
			[]want{{f + ".params.s.default", "cannot be used"}}},
		{"undeclared placeholder", Template{Command: []string{"run", "--x=${x}", "--y=${y}"}, Params: map[string]ParamSpec{"x": {Type: ParamInt}}},
			[]want{{f + ".command[2]", "${y} names no declared parameter"}}},
		{"two undeclared placeholders in one arg", Template{Command: []string{"run", "${a}-${b}"}},
			[]want{{f + ".command[1]", "${a} names no declared parameter"}, {f + ".command[1]", "${b} names no declared parameter"}}},
		{"empty placeholder", Template{Command: []string{"run", "${}"}},
			[]want{{f + ".command[1]", "${} names no declared parameter"}}},
		{"placeholder in program name", Template{Command: []string{"${prog}"}},
			[]want{{f + ".command[0]", "${prog} names no declared parameter"}}},

		{"env and pass_env", Template{Command: cmd, Env: map[string]string{"MODE": "fast-${n}", "_X1": ""},
			PassEnv: []string{"CUDA_HOME", "http_proxy"}, Params: map[string]ParamSpec{"n": {Type: ParamInt}}}, nil},
		{"env name with a dash", Template{Command: cmd, Env: map[string]string{"A-B": "x"}},
			[]want{{f + ".env.A-B", "not an environment variable name"}}},
		{"env name starting with a digit", Template{Command: cmd, Env: map[string]string{"1X": "x"}},
			[]want{{f + ".env.1X", "not an environment variable name"}}},
		{"env sets a contract variable", Template{Command: cmd, Env: map[string]string{"BALLAST_RESUME_FROM": "x"}},
			[]want{{f + ".env.BALLAST_RESUME_FROM", "is reserved"}}},
		{"env sets the GPUs", Template{Command: cmd, Env: map[string]string{"CUDA_VISIBLE_DEVICES": "0"}},
			[]want{{f + ".env.CUDA_VISIBLE_DEVICES", "is reserved: a GPU worker sets it to the GPUs granted"}}},
		{"pass_env the GPUs", Template{Command: cmd, PassEnv: []string{"NVIDIA_VISIBLE_DEVICES"}},
			[]want{{f + ".pass_env[0]", "NVIDIA_VISIBLE_DEVICES is reserved"}}},
		{"env value with NUL", Template{Command: cmd, Env: map[string]string{"X": "a\x00b"}},
			[]want{{f + ".env.X", "NUL"}}},
		{"env undeclared placeholder", Template{Command: cmd, Env: map[string]string{"X": "${y}"}},
			[]want{{f + ".env.X", "${y} names no declared parameter"}}},
		{"pass_env the API token", Template{Command: cmd, PassEnv: []string{"BALLAST_API_TOKEN"}},
			[]want{{f + ".pass_env[0]", "is reserved"}}},
		{"pass_env twice", Template{Command: cmd, PassEnv: []string{"A", "B", "A"}},
			[]want{{f + ".pass_env[2]", "A is listed twice"}}},
		{"pass_env also in env", Template{Command: cmd, Env: map[string]string{"A": "1"}, PassEnv: []string{"A"}},
			[]want{{f + ".pass_env[0]", "also set in env"}}},
		{"pass_env empty name", Template{Command: cmd, PassEnv: []string{""}},
			[]want{{f + ".pass_env[0]", "not an environment variable name"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expectProblems(t, tc.tmpl.Validate(f), tc.wants...)
		})
	}
}

func TestTemplateValidateReportsEveryProblemAtOnce(t *testing.T) {
	tmpl := Template{
		Class:      "gold",
		Rhythm:     "daily",
		Timeout:    Duration(-time.Minute),
		Grace:      Duration(time.Hour),
		MaxRetries: ptr(2),
		Team:       "Bad Team",
		Params: map[string]ParamSpec{
			"Bad":  {Type: ParamInt},
			"mode": {Type: ParamEnum},
			"n":    {Type: ParamInt, Min: ptr(5.0), Max: ptr(1.0), Required: true, Default: 3},
		},
	}
	const f = "templates.train"
	expectProblems(t, tmpl.Validate(f),
		want{f + ".command", "missing"},
		want{f + ".class", "unknown class"},
		want{f + ".rhythm", "unknown rhythm"},
		want{f + ".timeout", "must be between"},
		want{f + ".grace", "must be between"},
		want{f + ".max_retries", "set retryable: true"},
		want{f + ".team", "lower-case"},
		want{f + ".params.Bad", "a parameter name"},
		want{f + ".params.mode.values", "at least one value"},
		want{f + ".params.n.min", "min 5 is above max 1"},
		want{f + ".params.n.default", "cannot have a default"},
		want{f + ".params.n.default", "3 is below the minimum 5"},
	)
}

func TestNewCatalogReportsEveryProblemWithPaths(t *testing.T) {
	_, err := NewCatalog(map[string]Template{
		"ok":       {Command: []string{"true"}},
		"Bad Name": {Command: []string{"true"}},
		"empty":    {},
		"train": {
			Command: []string{"train", "--n=${n}", "${missing}"},
			Params:  map[string]ParamSpec{"n": {Type: ParamInt, Min: ptr(5.0), Max: ptr(1.0)}},
		},
	})
	ps := problemsOf(t, err)
	// Templates are checked in name order, so the report is deterministic.
	wantOrder := []want{
		{"templates.Bad Name", "a template name uses lower-case letters"},
		{"templates.empty.command", "missing"},
		{"templates.train.params.n.min", "min 5 is above max 1"},
		{"templates.train.command[2]", "${missing} names no declared parameter"},
	}
	if len(ps) != len(wantOrder) {
		t.Fatalf("got %d problems, want %d:%s", len(ps), len(wantOrder), describeProblems(ps))
	}
	for i, w := range wantOrder {
		if ps[i].Field != w.field || !strings.Contains(ps[i].Message, w.msg) {
			t.Errorf("problem %d = %s: %s, want %s: ...%s...", i, ps[i].Field, ps[i].Message, w.field, w.msg)
		}
	}
	for _, w := range wantOrder {
		if !strings.Contains(err.Error(), w.field+": ") {
			t.Errorf("Error() does not mention %s: %v", w.field, err)
		}
	}
}

func TestNewCatalogTemplateNames(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"train", true},
		{"etl.daily", true},
		{"x-1_y", true},
		{"0abc", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"Train", false},
		{"-x", false},
		{".x", false},
		{"_x", false},
		{"a b", false},
		{"a/b", false},
		{"\u00fcber", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat, err := NewCatalog(map[string]Template{tc.name: {Command: []string{"true"}}})
			if tc.ok {
				if err != nil {
					t.Fatalf("name %q refused: %v", tc.name, err)
				}
				if _, found := cat.Template(tc.name); !found {
					t.Fatalf("name %q accepted but not in the catalog", tc.name)
				}
				return
			}
			if cat != nil {
				t.Errorf("NewCatalog returned a catalog alongside an error")
			}
			expectProblems(t, err, want{"templates." + tc.name, "a template name"})
		})
	}
}

func TestNewCatalogDefaultsTemplates(t *testing.T) {
	in := map[string]Template{
		"clean": {Command: []string{"clean"}, Rhythm: RhythmPeriodic},
		"bench": {Handler: "sleep"},
		"etl":   {Command: []string{"etl"}, Retryable: true, Timeout: Duration(2 * time.Hour)},
	}
	cat, err := NewCatalog(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, wantN := cat.Names(), []string{"bench", "clean", "etl"}; !reflect.DeepEqual(got, wantN) {
		t.Errorf("Names() = %v, want %v", got, wantN)
	}
	for name, orig := range in {
		got, ok := cat.Template(name)
		if !ok {
			t.Fatalf("Template(%q) not found", name)
		}
		if wantT := orig.WithDefaults(); !reflect.DeepEqual(got, wantT) {
			t.Errorf("Template(%q) = %+v, want the defaulted %+v", name, got, wantT)
		}
	}
	if _, ok := cat.Template("nope"); ok {
		t.Error(`Template("nope") found`)
	}
	if in["etl"].MaxRetries != nil {
		t.Error("NewCatalog modified the caller's template")
	}
	if cat.AllowRaw {
		t.Error("AllowRaw is on by default")
	}

	empty, err := NewCatalog(nil)
	if err != nil {
		t.Fatalf("NewCatalog(nil): %v", err)
	}
	if n := empty.Names(); len(n) != 0 {
		t.Errorf("empty catalog Names() = %v", n)
	}
}

func TestWithDefaults(t *testing.T) {
	cases := []struct {
		name       string
		in         Template
		rhythm     Rhythm
		class      Class
		timeout    time.Duration
		grace      time.Duration
		maxRetries int
	}{
		{"empty is pulse and burst", Template{}, RhythmPulse, ClassBurst, DefaultTimeout, DefaultGrace, 0},
		{"periodic implies core", Template{Rhythm: RhythmPeriodic}, RhythmPeriodic, ClassCore, DefaultTimeout, DefaultGrace, 0},
		{"core implies periodic", Template{Class: ClassCore}, RhythmPeriodic, ClassCore, DefaultTimeout, DefaultGrace, 0},
		{"burst implies pulse", Template{Class: ClassBurst}, RhythmPulse, ClassBurst, DefaultTimeout, DefaultGrace, 0},
		{"pulse implies burst", Template{Rhythm: RhythmPulse}, RhythmPulse, ClassBurst, DefaultTimeout, DefaultGrace, 0},
		{"mixed implies burst", Template{Rhythm: RhythmMixed}, RhythmMixed, ClassBurst, DefaultTimeout, DefaultGrace, 0},
		{"sweep implies burst", Template{Rhythm: RhythmSweep}, RhythmSweep, ClassBurst, DefaultTimeout, DefaultGrace, 0},
		{"explicit pair kept", Template{Rhythm: RhythmPeriodic, Class: ClassBurst}, RhythmPeriodic, ClassBurst, DefaultTimeout, DefaultGrace, 0},
		{"explicit core sweep kept", Template{Rhythm: RhythmSweep, Class: ClassCore}, RhythmSweep, ClassCore, DefaultTimeout, DefaultGrace, 0},
		{"timeout and grace kept", Template{Timeout: Duration(6 * time.Hour), Grace: Duration(2 * time.Minute)}, RhythmPulse, ClassBurst, 6 * time.Hour, 2 * time.Minute, 0},
		{"retryable gets default retries", Template{Retryable: true}, RhythmPulse, ClassBurst, DefaultTimeout, DefaultGrace, DefaultRetries},
		{"retryable keeps its retries", Template{Retryable: true, MaxRetries: ptr(7)}, RhythmPulse, ClassBurst, DefaultTimeout, DefaultGrace, 7},
		{"retryable keeps explicit zero", Template{Retryable: true, MaxRetries: ptr(0)}, RhythmPulse, ClassBurst, DefaultTimeout, DefaultGrace, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.in
			got := tc.in.WithDefaults()
			if got.Rhythm != tc.rhythm || got.Class != tc.class {
				t.Errorf("rhythm/class = %s/%s, want %s/%s", got.Rhythm, got.Class, tc.rhythm, tc.class)
			}
			if got.Timeout.Std() != tc.timeout {
				t.Errorf("timeout = %s, want %s", got.Timeout, tc.timeout)
			}
			if got.Grace.Std() != tc.grace {
				t.Errorf("grace = %s, want %s", got.Grace, tc.grace)
			}
			if got.MaxRetries == nil || *got.MaxRetries != tc.maxRetries {
				t.Errorf("max_retries = %v, want %d", got.MaxRetries, tc.maxRetries)
			}
			if !reflect.DeepEqual(tc.in, before) {
				t.Errorf("WithDefaults changed its receiver: %+v", tc.in)
			}
			if again := got.WithDefaults(); !reflect.DeepEqual(again, got) {
				t.Errorf("WithDefaults is not idempotent: %+v then %+v", got, again)
			}
		})
	}
}

func TestParseClassAndRhythm(t *testing.T) {
	for _, s := range []string{"core", "burst"} {
		if c, err := ParseClass(s); err != nil || string(c) != s {
			t.Errorf("ParseClass(%q) = %q, %v", s, c, err)
		}
	}
	for _, s := range []string{"", "Core", "spot"} {
		if _, err := ParseClass(s); err == nil || !strings.Contains(err.Error(), "use core or burst") {
			t.Errorf("ParseClass(%q) error = %v, want one saying what to use", s, err)
		}
	}
	for _, s := range []string{"periodic", "pulse", "mixed", "sweep"} {
		if r, err := ParseRhythm(s); err != nil || string(r) != s {
			t.Errorf("ParseRhythm(%q) = %q, %v", s, r, err)
		}
	}
	for _, s := range []string{"", "daily", "Pulse"} {
		if _, err := ParseRhythm(s); err == nil || !strings.Contains(err.Error(), "use periodic, pulse, mixed or sweep") {
			t.Errorf("ParseRhythm(%q) error = %v, want one saying what to use", s, err)
		}
	}
}

func TestStatePredicates(t *testing.T) {
	cases := []struct {
		s               State
		valid, terminal bool
	}{
		{StateQueued, true, false},
		{StateRunning, true, false},
		{StateSucceeded, true, true},
		{StateFailed, true, true},
		{StateCancelled, true, true},
		{"", false, false},
		{"done", false, false},
	}
	for _, tc := range cases {
		if got := tc.s.Valid(); got != tc.valid {
			t.Errorf("%q.Valid() = %v, want %v", tc.s, got, tc.valid)
		}
		if got := tc.s.Terminal(); got != tc.terminal {
			t.Errorf("%q.Terminal() = %v, want %v", tc.s, got, tc.terminal)
		}
	}
}

func TestValidateErrorIsNilInterface(t *testing.T) {
	// A typed nil *ValidationError in an error would make err != nil true.
	err := Template{Command: []string{"true"}}.Validate("templates.t")
	if err != nil {
		t.Fatalf("valid template: %v", err)
	}
	err = Template{}.Validate("templates.t")
	if !errors.As(err, new(*FieldError)) {
		t.Fatalf("invalid template: errors.As(*FieldError) failed on %v", err)
	}
}
