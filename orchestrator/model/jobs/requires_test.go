package jobs

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A template may accept several values of a label; the record and the
// policy carry them joined by AnyOf, and a worker reporting any one of them
// meets the requirement.
func TestRequiresAcceptsAListOfValues(t *testing.T) {
	var tpl Template
	src := "command: [train]\nrequires: {gpu_model: [V100M16, V100M32], zone: a}\n"
	if err := yaml.Unmarshal([]byte(src), &tpl); err != nil {
		t.Fatal(err)
	}
	if got := tpl.Requires["gpu_model"]; got != "V100M16|V100M32" || tpl.Requires["zone"] != "a" {
		t.Fatalf("read %v", tpl.Requires)
	}
	if err := tpl.Validate("templates.x"); err != nil {
		t.Fatalf("a list of models is refused: %v", err)
	}
	b, err := json.Marshal(Spec{Size: tpl.Size})
	if err != nil || !strings.Contains(string(b), `"gpu_model":"V100M16|V100M32"`) {
		t.Fatalf("spec JSON %s, %v", b, err)
	}
	for _, c := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{"gpu_model": "V100M32", "zone": "a"}, true},
		{map[string]string{"gpu_model": "V100M16", "zone": "a"}, true},
		{map[string]string{"gpu_model": "V100", "zone": "a"}, false},
		{map[string]string{"gpu_model": "V100M16"}, false},
		{nil, false},
	} {
		if got := Carries(c.labels, tpl.Requires); got != c.want {
			t.Errorf("Carries(%v) = %t, want %t", c.labels, got, c.want)
		}
	}
	if !Carries(nil, nil) {
		t.Error("no requirement is not met by no labels")
	}
}

func TestRequiresListsAreChecked(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"requires: {gpu_model: []}", "an empty list accepts no worker"},
		{"requires: {gpu_model: [A100, 3]}", "give the values workers report, as strings"},
		{"requires: {gpu_model: {a: b}}", "neither a value nor a list of values"},
	} {
		var tpl Template
		err := yaml.Unmarshal([]byte("command: [x]\n"+c.src+"\n"), &tpl)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.src, err, c.want)
		}
	}
	// Each value of a list is a label value: one that is not is named.
	tpl := Template{Command: []string{"x"}, Size: Size{Requires: Requires{"gpu_model": "A100|"}}}
	if err := tpl.Validate("templates.x"); err == nil || !strings.Contains(err.Error(), "templates.x.requires.gpu_model") ||
		!strings.Contains(err.Error(), `the value "" of the list`) {
		t.Errorf("an empty value in a list: %v", err)
	}
	// A worker's own label may not hold the separator.
	if msg := LabelProblem("gpu_model", "A|B"); !strings.Contains(msg, "separates the values a requirement accepts") {
		t.Errorf("LabelProblem with the separator: %q", msg)
	}
}

func TestLabelsKeyIsTheSameForEqualSets(t *testing.T) {
	a := LabelsKey(map[string]string{"gpu_model": "A100", "zone": "b"})
	b := LabelsKey(map[string]string{"zone": "b", "gpu_model": "A100"})
	if a != b || a != "gpu_model=A100;zone=b;" || LabelsKey(nil) != "" || a == LabelsKey(map[string]string{"gpu_model": "A100"}) {
		t.Errorf("keys %q, %q", a, b)
	}
}
