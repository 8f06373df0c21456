package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func testCatalog(t *testing.T) *Catalog {
	t.Helper()
	cat, err := NewCatalog(map[string]Template{
		"train": {
			Command: []string{"python", "train.py", "--epochs=${epochs}", "--lr", "${lr}",
				"--data=${bucket}/${path}", "--tag=${tag}", "--mode", "${mode}", "--verbose=${verbose}"},
			Params: map[string]ParamSpec{
				"epochs":  {Type: ParamInt, Required: true, Min: ptr(1.0), Max: ptr(1000.0)},
				"lr":      {Type: ParamFloat, Default: 0.01},
				"bucket":  {Type: ParamString, Default: "s3://data"},
				"path":    {Type: ParamString, Required: true},
				"tag":     {Type: ParamString},
				"mode":    {Type: ParamEnum, Values: []string{"fast", "slow"}, Default: "fast"},
				"verbose": {Type: ParamBool, Default: false},
			},
			Class: ClassBurst, Rhythm: RhythmSweep, Checkpointable: true, Retryable: true,
			Timeout: Duration(6 * time.Hour), Grace: Duration(2 * time.Minute), Team: "ml",
		},
		"clean": {Command: []string{"clean", "--all"}, Rhythm: RhythmPeriodic},
		"bench": {Handler: "sleep", Params: map[string]ParamSpec{"ms": {Type: ParamInt, Default: 10}}},
	})
	if err != nil {
		t.Fatalf("NewCatalog: %v", err)
	}
	return cat
}

// raw builds submission params from Go values.
func raw(t *testing.T, kv ...any) map[string]json.RawMessage {
	t.Helper()
	if len(kv)%2 != 0 {
		t.Fatal("raw: odd argument count")
	}
	m := make(map[string]json.RawMessage, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		b, err := json.Marshal(kv[i+1])
		if err != nil {
			t.Fatal(err)
		}
		m[kv[i].(string)] = b
	}
	return m
}

func TestResolveAppliesDefaultsAndRenders(t *testing.T) {
	cat := testCatalog(t)
	spec, err := cat.Resolve(Submission{
		Template: "train",
		Params:   raw(t, "epochs", 20, "path", "x/y"),
	})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	wantSpec := Spec{
		Template: "train",
		Params: map[string]any{
			"epochs": int64(20), "path": "x/y",
			"lr": 0.01, "bucket": "s3://data", "mode": "fast", "verbose": false,
		},
		Command: []string{"python", "train.py", "--epochs=20", "--lr", "0.01",
			"--data=s3://data/x/y", "--tag=", "--mode", "fast", "--verbose=false"},
		Class: ClassBurst, Rhythm: RhythmSweep, Checkpointable: true, Retryable: true,
		MaxRetries: DefaultRetries, Timeout: Duration(6 * time.Hour), Grace: Duration(2 * time.Minute),
		Team: "ml",
	}
	if !reflect.DeepEqual(spec, wantSpec) {
		t.Errorf("Resolve =\n%+v\nwant\n%+v", spec, wantSpec)
	}
	if _, set := spec.Params["tag"]; set {
		t.Error("an unset optional parameter without default appears in Params")
	}
}

func TestResolveGivenValuesOverrideDefaults(t *testing.T) {
	cat := testCatalog(t)
	spec, err := cat.Resolve(Submission{
		Template: "train",
		Params:   raw(t, "epochs", 1e3, "path", "p", "lr", 0.5, "bucket", "gs://b", "tag", "v1", "mode", "slow", "verbose", true),
	})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	wantCmd := []string{"python", "train.py", "--epochs=1000", "--lr", "0.5",
		"--data=gs://b/p", "--tag=v1", "--mode", "slow", "--verbose=true"}
	if !reflect.DeepEqual(spec.Command, wantCmd) {
		t.Errorf("Command = %q, want %q", spec.Command, wantCmd)
	}
	if spec.Params["epochs"] != int64(1000) {
		t.Errorf("epochs = %#v, want int64(1000)", spec.Params["epochs"])
	}
}

func TestResolveCatalogDefaults(t *testing.T) {
	cat := testCatalog(t)

	clean, err := cat.Resolve(Submission{Template: "clean"})
	if err != nil {
		t.Fatalf("Resolve clean: %v", err)
	}
	if clean.Class != ClassCore || clean.Rhythm != RhythmPeriodic {
		t.Errorf("clean class/rhythm = %s/%s, want core/periodic", clean.Class, clean.Rhythm)
	}
	if clean.Timeout.Std() != DefaultTimeout || clean.Grace.Std() != DefaultGrace || clean.MaxRetries != 0 {
		t.Errorf("clean timeout/grace/retries = %s/%s/%d", clean.Timeout, clean.Grace, clean.MaxRetries)
	}
	if !reflect.DeepEqual(clean.Command, []string{"clean", "--all"}) {
		t.Errorf("clean command = %q", clean.Command)
	}
	if len(clean.Params) != 0 || clean.Team != "" || clean.Handler != "" {
		t.Errorf("clean spec has unexpected fields: %+v", clean)
	}

	bench, err := cat.Resolve(Submission{Template: "bench"})
	if err != nil {
		t.Fatalf("Resolve bench: %v", err)
	}
	if bench.Handler != "sleep" || bench.Command != nil {
		t.Errorf("bench handler/command = %q/%q, want sleep/nil", bench.Handler, bench.Command)
	}
	if bench.Params["ms"] != int64(10) {
		t.Errorf("bench default ms = %#v, want int64(10)", bench.Params["ms"])
	}
	if bench.Class != ClassBurst || bench.Rhythm != RhythmPulse {
		t.Errorf("bench class/rhythm = %s/%s, want burst/pulse", bench.Class, bench.Rhythm)
	}
}

func TestResolveNoShellInterpretation(t *testing.T) {
	cat := testCatalog(t)
	for _, v := range []string{
		"; rm -rf /",
		"$(whoami) `id` && echo pwned | sh",
		"a b\tc\nd",
		"${epochs}", // a value is never expanded again
		"'\"\\",
		"",
	} {
		spec, err := cat.Resolve(Submission{Template: "train", Params: raw(t, "epochs", 3, "path", v, "tag", v)})
		if err != nil {
			t.Fatalf("Resolve with %q: %v", v, err)
		}
		if len(spec.Command) != 10 {
			t.Fatalf("value %q changed the argv length to %d: %q", v, len(spec.Command), spec.Command)
		}
		if got, wantArg := spec.Command[5], "--data=s3://data/"+v; got != wantArg {
			t.Errorf("argv[5] = %q, want %q", got, wantArg)
		}
		if got, wantArg := spec.Command[6], "--tag="+v; got != wantArg {
			t.Errorf("argv[6] = %q, want %q", got, wantArg)
		}
		if spec.Command[2] != "--epochs=3" {
			t.Errorf("argv[2] = %q, want --epochs=3", spec.Command[2])
		}
	}
}

func TestTemplateRender(t *testing.T) {
	tmpl := Template{Command: []string{"p", "${a}${b}", "x${a}y${a}z", "${c}", "plain", "$a", "${a"}}
	got := tmpl.render(map[string]any{"a": int64(1), "b": "two"})
	wantArgs := []string{"p", "1two", "x1y1z", "", "plain", "$a", "${a"}
	if !reflect.DeepEqual(got, wantArgs) {
		t.Errorf("render = %q, want %q", got, wantArgs)
	}
	if tmpl.Command[1] != "${a}${b}" {
		t.Error("render modified the template's command")
	}
	if r := (Template{Handler: "h"}).render(map[string]any{"a": 1}); r != nil {
		t.Errorf("render of a handler template = %q, want nil", r)
	}
}

func TestResolveRequiredMissing(t *testing.T) {
	cat := testCatalog(t)
	spec, err := cat.Resolve(Submission{Template: "train"})
	expectProblems(t, err,
		want{"params.epochs", "missing required int parameter"},
		want{"params.path", "missing required string parameter"},
	)
	if !reflect.DeepEqual(spec, Spec{}) {
		t.Errorf("Resolve returned a spec alongside an error: %+v", spec)
	}
}

func TestResolveUnknownParamListsTheTemplatesParams(t *testing.T) {
	cat := testCatalog(t)
	_, err := cat.Resolve(Submission{Template: "train", Params: raw(t, "epochs", 1, "path", "p", "epoch", 2)})
	expectProblems(t, err, want{"params.epoch",
		`unknown parameter (template "train" takes: bucket, epochs, lr, mode, path, tag, verbose)`})

	_, err = cat.Resolve(Submission{Template: "clean", Params: raw(t, "x", 1)})
	expectProblems(t, err, want{"params.x", `template "clean" takes: no parameters`})
}

func TestResolveBadParamValues(t *testing.T) {
	cat := testCatalog(t)
	_, err := cat.Resolve(Submission{Template: "train", Params: raw(t,
		"epochs", "20", "path", 5, "lr", "fast", "mode", "turbo", "verbose", 1)})
	expectProblems(t, err,
		want{"params.epochs", `must be an integer, got the string "20"`},
		want{"params.path", "must be a string, got the number 5"},
		want{"params.lr", "must be a number"},
		want{"params.mode", `"turbo" is not one of fast, slow`},
		want{"params.verbose", "must be true or false"},
	)

	_, err = cat.Resolve(Submission{Template: "train", Params: raw(t, "epochs", 0, "path", "p")})
	expectProblems(t, err, want{"params.epochs", "0 is below the minimum 1"})

	_, err = cat.Resolve(Submission{Template: "train", Params: map[string]json.RawMessage{
		"epochs": json.RawMessage(`null`), "path": json.RawMessage(`"p"`)}})
	expectProblems(t, err, want{"params.epochs", "must not be null"})
}

func TestResolveUnknownTemplate(t *testing.T) {
	cat := testCatalog(t)
	_, err := cat.Resolve(Submission{Template: "trian", Params: raw(t, "epochs", 1)})
	if !errors.Is(err, ErrUnknownTemplate) {
		t.Fatalf("errors.Is(err, ErrUnknownTemplate) = false for %v", err)
	}
	expectProblems(t, err, want{"template", `unknown template "trian" (known: bench, clean, train)`})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "template" {
		t.Errorf("errors.As(*FieldError) = %v", fe)
	}

	// Envelope problems are reported with it.
	_, err = cat.Resolve(Submission{Template: "trian", Class: "gold"})
	expectProblems(t, err, want{"class", "unknown class"}, want{"template", "unknown template"})

	_, err = cat.Resolve(Submission{})
	expectProblems(t, err, want{"template", "missing: name one of the configured templates"})
	if errors.Is(err, ErrUnknownTemplate) {
		t.Error("a missing template is reported as ErrUnknownTemplate")
	}
}

func TestResolveUnknownTemplateKnownList(t *testing.T) {
	empty, err := NewCatalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = empty.Resolve(Submission{Template: "x"})
	expectProblems(t, err, want{"template", "(known: none configured)"})

	many := map[string]Template{}
	for i := range 12 {
		many[fmt.Sprintf("t%02d", i)] = Template{Command: []string{"true"}}
	}
	cat, err := NewCatalog(many)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cat.Resolve(Submission{Template: "x"})
	expectProblems(t, err, want{"template", "(known: t00, t01, t02, t03, t04, t05, t06, t07, t08, t09, …)"})
	if got := cat.Names(); len(got) != 12 || got[10] != "t10" {
		t.Errorf("knownList truncation modified Names(): %v", got)
	}
}

func TestResolveClassOverride(t *testing.T) {
	cat := testCatalog(t)
	spec, err := cat.Resolve(Submission{Template: "clean", Class: "burst"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Class != ClassBurst || spec.Rhythm != RhythmPeriodic {
		t.Errorf("class/rhythm = %s/%s, want burst/periodic", spec.Class, spec.Rhythm)
	}
	spec, err = cat.Resolve(Submission{Template: "bench", Class: "core"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Class != ClassCore {
		t.Errorf("class = %s, want core", spec.Class)
	}
	_, err = cat.Resolve(Submission{Template: "clean", Class: "spot"})
	expectProblems(t, err, want{"class", `unknown class "spot" (use core or burst)`})
}

func TestResolveTimeoutOverride(t *testing.T) {
	cat := testCatalog(t)
	cases := []struct {
		name    string
		timeout time.Duration
		wantErr string
	}{
		{"two hours", 2 * time.Hour, ""},
		{"shorter than the template", time.Second, ""},
		{"at the limit", MaxTimeout, ""},
		{"zero", 0, "must be positive, got 0s"},
		{"negative", -time.Minute, "must be positive, got -1m0s"},
		{"above the limit", MaxTimeout + time.Nanosecond, "is above the limit 168h0m0s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Duration(tc.timeout)
			spec, err := cat.Resolve(Submission{Template: "clean", Timeout: &d})
			if tc.wantErr != "" {
				expectProblems(t, err, want{"timeout", tc.wantErr})
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec.Timeout.Std() != tc.timeout {
				t.Errorf("timeout = %s, want %s", spec.Timeout, tc.timeout)
			}
		})
	}
}

func TestResolveTeamOverride(t *testing.T) {
	cat := testCatalog(t)
	sub := Submission{Template: "train", Params: raw(t, "epochs", 1, "path", "p")}

	spec, err := cat.Resolve(sub)
	if err != nil || spec.Team != "ml" {
		t.Fatalf("template team = %q, %v; want ml", spec.Team, err)
	}
	sub.Team = "data.eu-1"
	spec, err = cat.Resolve(sub)
	if err != nil || spec.Team != "data.eu-1" {
		t.Fatalf("overridden team = %q, %v; want data.eu-1", spec.Team, err)
	}
	for _, bad := range []string{"Data", "data team", "-data", strings.Repeat("t", 64)} {
		sub.Team = bad
		_, err = cat.Resolve(sub)
		expectProblems(t, err, want{"team", "use lower-case letters, digits"})
	}
}

func TestResolveLabels(t *testing.T) {
	cat := testCatalog(t)
	labels := map[string]string{"env": "prod", "k8s.io/app": "x", "A_b-c": strings.Repeat("v", MaxLabelValueBytes), "empty": ""}
	spec, err := cat.Resolve(Submission{Template: "clean", Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(spec.Labels, labels) {
		t.Errorf("labels = %v, want %v", spec.Labels, labels)
	}

	tooMany := map[string]string{}
	for i := range MaxLabels + 1 {
		tooMany[fmt.Sprintf("k%d", i)] = "v"
	}
	_, err = cat.Resolve(Submission{Template: "clean", Labels: tooMany})
	expectProblems(t, err, want{"labels", "33 labels; the limit is 32"})

	atLimit := map[string]string{}
	for i := range MaxLabels {
		atLimit[fmt.Sprintf("k%d", i)] = "v"
	}
	if _, err := cat.Resolve(Submission{Template: "clean", Labels: atLimit}); err != nil {
		t.Errorf("%d labels refused: %v", MaxLabels, err)
	}

	_, err = cat.Resolve(Submission{Template: "clean", Labels: map[string]string{
		"a b":                   "v",
		"-x":                    "v",
		"":                      "v",
		strings.Repeat("k", 64): "v",
		"long":                  strings.Repeat("v", MaxLabelValueBytes+1),
	}})
	expectProblems(t, err,
		want{"labels.a b", "a label key uses"},
		want{"labels.-x", "a label key uses"},
		want{"labels.", "a label key uses"},
		want{"labels." + strings.Repeat("k", 64), "a label key uses"},
		want{"labels.long", "value is 257 bytes; the limit is 256"},
	)
}

func TestResolveIdempotencyKey(t *testing.T) {
	cat := testCatalog(t)
	cases := []struct {
		name    string
		key     string
		wantErr string
	}{
		{"uuid", "6f1c2d9e-8a8b-4c55-9d3b-2f0f1e7c9a10", ""},
		{"at the limit", strings.Repeat("k", MaxIdempotencyBytes), ""},
		{"non-ASCII", "clé-\u00e9t\u00e9", ""},
		{"punctuation", "a:b/c#d!~", ""},
		{"too long", strings.Repeat("k", MaxIdempotencyBytes+1), "is 201 bytes; the limit is 200"},
		{"space", "a b", "must not contain spaces or control characters"},
		{"tab", "a\tb", "must not contain spaces or control characters"},
		{"newline", "ab\n", "must not contain spaces or control characters"},
		{"NUL", "a\x00", "must not contain spaces or control characters"},
		{"DEL", "a\x7f", "must not contain spaces or control characters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := cat.Resolve(Submission{Template: "clean", IdempotencyKey: tc.key})
			if tc.wantErr != "" {
				expectProblems(t, err, want{"idempotency_key", tc.wantErr})
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec.IdempotencyKey != tc.key {
				t.Errorf("key = %q, want %q", spec.IdempotencyKey, tc.key)
			}
		})
	}
	// Too long and containing a space: both are reported, the space once.
	_, err := cat.Resolve(Submission{Template: "clean", IdempotencyKey: strings.Repeat("a b", 100)})
	expectProblems(t, err,
		want{"idempotency_key", "is 300 bytes"},
		want{"idempotency_key", "must not contain spaces"},
	)
}

func TestResolveRawCommand(t *testing.T) {
	cat := testCatalog(t)
	argv := []string{"sh", "-c", "echo hi; exit 3"}

	_, err := cat.Resolve(Submission{Command: argv})
	expectProblems(t, err, want{"command", "raw commands are disabled on this server; name a template instead"})
	_, err = cat.Resolve(Submission{Template: "clean", Command: argv})
	expectProblems(t, err, want{"command", "raw commands are disabled"})

	cat.AllowRaw = true
	sub := Submission{Command: append([]string(nil), argv...), Team: "ops", Labels: map[string]string{"k": "v"}}
	spec, err := cat.Resolve(sub)
	if err != nil {
		t.Fatalf("raw command with AllowRaw: %v", err)
	}
	wantSpec := Spec{
		Params:  map[string]any{},
		Command: argv,
		Class:   ClassBurst, Rhythm: RhythmPulse,
		Timeout: Duration(DefaultTimeout), Grace: Duration(DefaultGrace),
		Team: "ops", Labels: map[string]string{"k": "v"},
	}
	if !reflect.DeepEqual(spec, wantSpec) {
		t.Errorf("raw spec =\n%+v\nwant\n%+v", spec, wantSpec)
	}
	sub.Command[0] = "changed"
	if spec.Command[0] != "sh" {
		t.Error("the spec shares the submission's command slice")
	}

	_, err = cat.Resolve(Submission{Template: "clean", Command: argv})
	expectProblems(t, err, want{"command", "give template or command, not both"})

	_, err = cat.Resolve(Submission{Command: []string{" ", "x"}})
	expectProblems(t, err, want{"command[0]", "the program name is empty"})

	long := make([]string, MaxRawArgs+1)
	for i := range long {
		long[i] = "a"
	}
	_, err = cat.Resolve(Submission{Command: long})
	expectProblems(t, err, want{"command", "257 arguments; the limit is 256"})

	_, err = cat.Resolve(Submission{Command: argv, Params: raw(t, "x", 1)})
	expectProblems(t, err, want{"params.x", "a raw command takes no parameters"})
}

func TestResolveTooManyParams(t *testing.T) {
	cat := testCatalog(t)
	params := map[string]json.RawMessage{}
	for i := range MaxParams + 1 {
		params[fmt.Sprintf("p%d", i)] = json.RawMessage(`1`)
	}
	_, err := cat.Resolve(Submission{Template: "clean", Params: params})
	ps := problemsOf(t, err)
	if !hasProblem(ps, want{"params", "65 parameters; the limit is 64"}) {
		t.Errorf("no params limit problem:%s", describeProblems(ps))
	}
}

func TestResolveReportsEveryProblemAtOnce(t *testing.T) {
	cat := testCatalog(t)
	neg := Duration(-time.Second)
	_, err := cat.Resolve(Submission{
		Template:       "train",
		Params:         raw(t, "epochs", 10.5, "nope", 1),
		IdempotencyKey: "has space",
		Team:           "Bad",
		Labels:         map[string]string{"bad key": "v"},
		Class:          "gold",
		Timeout:        &neg,
	})
	expectProblems(t, err,
		want{"idempotency_key", "spaces"},
		want{"team", "lower-case"},
		want{"labels.bad key", "label key"},
		want{"class", "unknown class"},
		want{"timeout", "must be positive"},
		want{"params.epochs", "must be an integer, got 10.5"},
		want{"params.nope", "unknown parameter"},
		want{"params.path", "missing required string parameter"},
	)
	if n := len(strings.Split(err.Error(), "; ")); n != 8 {
		t.Errorf("Error() lists %d problems, want 8: %v", n, err)
	}
}
