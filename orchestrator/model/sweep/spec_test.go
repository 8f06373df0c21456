package sweep

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeSpecRoundTrips(t *testing.T) {
	in := `{
		"template": "train",
		"space": {"random": {"seed": 18446744073709551615, "count": 20, "params": {
			"lr": {"type": "log_uniform", "min": 1e-4, "max": 0.1},
			"opt": {"type": "choice", "values": ["sgd", "adam"]}
		}}},
		"max_parallel": 4,
		"metric": "loss",
		"goal": "minimize",
		"fixed": {"epochs": 3},
		"team": "ml",
		"labels": {"env": "dev"},
		"early_stop": {"min_trials": 5, "after_step": 2},
		"idempotency_key": "sw-7"
	}`
	s, err := DecodeSpec([]byte(in))
	if err != nil {
		t.Fatalf("DecodeSpec: %v", err)
	}
	if s.Space.Random == nil || s.Space.Random.Seed != 1<<64-1 || s.Space.Random.Count != 20 ||
		*s.Space.Random.Params["lr"].Min != 1e-4 || len(s.Space.Random.Params["opt"].Values) != 2 {
		t.Errorf("space decoded as %+v", s.Space.Random)
	}
	if s.MaxParallel != 4 || s.Metric != "loss" || s.Goal != Minimize || s.EarlyStop == nil ||
		*s.EarlyStop != (MedianRule{MinTrials: 5, AfterStep: 2}) || s.IdempotencyKey != "sw-7" ||
		string(s.Fixed["epochs"]) != "3" || s.Labels["env"] != "dev" {
		t.Errorf("decoded %+v", s)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodeSpec(out)
	if err != nil {
		t.Fatalf("re-decoding %s: %v", out, err)
	}
	if !reflect.DeepEqual(again, s) {
		t.Errorf("round trip changed the spec:\n%+v\n%+v", again, s)
	}
	if _, err := Expand(s, testCatalog(t)); err != nil {
		t.Errorf("decoded spec does not expand: %v", err)
	}
}

func TestDecodeSpecRejects(t *testing.T) {
	cases := []struct {
		name, in, field string
	}{
		{"empty", ``, "body"},
		{"not json", `{"template": }`, "body"},
		{"two objects", `{"template":"train"} {}`, "body"},
		{"unknown field", `{"template":"train","spaces":{}}`, "spaces"},
		{"unknown dist field", `{"template":"train","space":{"random":{"seed":1,"count":2,"params":{"lr":{"type":"uniform","lo":0}}}}}`, "lo"},
		{"count as string", `{"template":"train","space":{"random":{"seed":1,"count":"5","params":{}}}}`, "space.random.count"},
		{"negative seed", `{"template":"train","space":{"random":{"seed":-1,"count":5,"params":{}}}}`, "space.random.seed"},
		{"max_parallel fraction", `{"template":"train","max_parallel":1.5}`, "max_parallel"},
		{"grid not arrays", `{"template":"train","space":{"grid":{"lr":0.1}}}`, "space.grid"},
		{"invalid utf8", "{\"template\":\"\xff\"}", "body"},
		{"oversize", `{"template":"` + strings.Repeat("x", MaxSpecBytes) + `"}`, "body"},
		{"duplicate grid parameter", `{"template":"train","space":{"grid":{"lr":[0.1],"lr":[0.2]}}}`, "space.grid.lr"},
		{"duplicate key in a listed trial", `{"template":"train","space":{"list":[{"a":1},{"a":1,"a":2}]}}`, "space.list[1].a"},
		{"duplicate struct field in another case", `{"template":"train","Template":"other"}`, "Template"},
		{"duplicate random parameter", `{"template":"train","space":{"random":{"seed":1,"count":2,"params":{"x":{"type":"uniform"},"x":{"type":"choice"}}}}}`, "space.random.params.x"},
		{"duplicate fixed parameter", `{"template":"train","fixed":{"e":1,"e":1}}`, "fixed.e"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeSpec([]byte(c.in))
			wantField(t, err, c.field)
		})
	}
}

func TestDecodeSpecMapKeysAreCaseSensitive(t *testing.T) {
	s, err := DecodeSpec([]byte(`{"template":"train","space":{"grid":{"lr":[1],"LR":[2]},"list":[{"a":1,"A":2}]},"fixed":{"e":1,"E":2}}`))
	if err != nil {
		t.Fatalf("DecodeSpec: %v", err)
	}
	if len(s.Space.Grid) != 2 || len(s.Space.List[0]) != 2 || len(s.Fixed) != 2 {
		t.Errorf("decoded %+v, want keys differing in case kept apart", s)
	}
}

func TestWithDefaults(t *testing.T) {
	s := Spec{}.WithDefaults()
	if s.Metric != DefaultMetric || s.Goal != Minimize {
		t.Errorf("defaults %q %q", s.Metric, s.Goal)
	}
	s = Spec{Metric: "acc", Goal: Maximize}.WithDefaults()
	if s.Metric != "acc" || s.Goal != Maximize {
		t.Errorf("defaults overrode %q %q", s.Metric, s.Goal)
	}
}
