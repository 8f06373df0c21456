package sweep

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func ptr[T any](v T) *T { return &v }

func testCatalog(t *testing.T) *jobs.Catalog {
	t.Helper()
	cat, err := jobs.NewCatalog(map[string]jobs.Template{
		"train": {
			Command: []string{"python", "train.py", "--epochs=${epochs}", "--lr=${lr}", "--opt=${opt}", "--wd=${wd}"},
			Params: map[string]jobs.ParamSpec{
				"epochs": {Type: jobs.ParamInt, Required: true, Min: ptr(1.0), Max: ptr(1000.0)},
				"lr":     {Type: jobs.ParamFloat, Default: 0.01, Min: ptr(0.0), Max: ptr(1.0)},
				"opt":    {Type: jobs.ParamEnum, Values: []string{"sgd", "adam"}, Default: "sgd"},
				"wd":     {Type: jobs.ParamFloat, Default: 0.0},
				"fast":   {Type: jobs.ParamBool, Default: false},
			},
			Class: jobs.ClassBurst, Checkpointable: true, Retryable: true, Team: "ml",
		},
		"wide": {
			Handler: "noop",
			Params: map[string]jobs.ParamSpec{
				"a": {Type: jobs.ParamInt}, "b": {Type: jobs.ParamInt}, "c": {Type: jobs.ParamInt},
			},
			Rhythm: jobs.RhythmSweep,
		},
		"clean": {Command: []string{"clean"}, Rhythm: jobs.RhythmPeriodic},
	})
	if err != nil {
		t.Fatalf("NewCatalog: %v", err)
	}
	return cat
}

// vals encodes Go values as JSON values.
func vals(t *testing.T, vs ...any) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// obj builds a parameter map from name, value pairs.
func obj(t *testing.T, kv ...any) map[string]json.RawMessage {
	t.Helper()
	m := map[string]json.RawMessage{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = vals(t, kv[i+1])[0]
	}
	return m
}

// fields returns the field paths of a *jobs.ValidationError.
func fields(t *testing.T, err error) []string {
	t.Helper()
	var ve *jobs.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *jobs.ValidationError", err, err)
	}
	out := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		out[i] = p.Field
		if strings.TrimSpace(p.Message) == "" {
			t.Errorf("problem on %s has no message", p.Field)
		}
	}
	return out
}

func wantField(t *testing.T, err error, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one on %s", field)
	}
	for _, f := range fields(t, err) {
		if f == field {
			return
		}
	}
	t.Fatalf("error %v does not name %s", err, field)
}
