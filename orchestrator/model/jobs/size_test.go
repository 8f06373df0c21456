package jobs

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func sizedCatalog(t *testing.T) *Catalog {
	t.Helper()
	cat, err := NewCatalog(map[string]Template{
		"train": {Command: []string{"train"}, Size: Size{Slots: 2, CPUs: 8, Memory: 16 << 30,
			Requires: map[string]string{"gpu_model": "A100-80GB"}}, MaxSlots: 8},
		"ddp":   {Command: []string{"ddp"}, Size: Size{Slots: 4}},
		"small": {Command: []string{"small"}},
	})
	if err != nil {
		t.Fatalf("NewCatalog: %v", err)
	}
	return cat
}

func TestSizeComesFromTheTemplate(t *testing.T) {
	cat := sizedCatalog(t)
	spec, err := cat.Resolve(Submission{Template: "ddp"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.SlotCount() != 4 || spec.Members() != 1 || spec.TotalSlots() != 4 || spec.Gang() || !spec.Sized() {
		t.Errorf("size %+v: want one member of 4 slots", spec.Size)
	}
	// Sizes count members: what a gang would be billed for.
	if g := (Size{Slots: 4, Replicas: 2}); g.TotalSlots() != 8 || !g.Gang() || g.Members() != 2 {
		t.Errorf("a gang of 2 x 4: total %d gang %v", g.TotalSlots(), g.Gang())
	}
	small, err := cat.Resolve(Submission{Template: "small"})
	if err != nil {
		t.Fatal(err)
	}
	if small.Sized() || small.SlotCount() != 1 || small.Members() != 1 || small.TotalSlots() != 1 {
		t.Errorf("an unsized template gives %+v", small.Size)
	}
	// The spec owns its labels: changing the catalog's later changes no job.
	train, _ := cat.Resolve(Submission{Template: "train"})
	train.Requires["gpu_model"] = "changed"
	again, _ := cat.Resolve(Submission{Template: "train"})
	if again.Requires["gpu_model"] != "A100-80GB" {
		t.Errorf("a resolved spec shares the template's requires map")
	}
}

func TestSubmissionSlotsWithinMaxSlots(t *testing.T) {
	cat := sizedCatalog(t)
	for _, tc := range []struct {
		template string
		slots    int
		want     int    // resolved slots, when accepted
		problem  string // part of the error, when refused
	}{
		{"train", 8, 8, ""},
		{"train", 1, 1, ""},
		{"train", 9, 0, "allows 1 to 8 slots"},
		{"train", 0, 0, "allows 1 to 8 slots"},
		{"ddp", 2, 2, ""},
		{"ddp", 5, 0, "sets no max_slots, so a submission may only lower"},
		{"small", 2, 0, "allows 1 to 1 slots"},
	} {
		n := tc.slots
		spec, err := cat.Resolve(Submission{Template: tc.template, Slots: &n})
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%s slots %d: %v", tc.template, n, err)
		case tc.problem == "" && spec.Slots != tc.want:
			t.Errorf("%s slots %d: resolved %d", tc.template, n, spec.Slots)
		case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem) || !strings.Contains(err.Error(), "slots")):
			t.Errorf("%s slots %d: error %v, want one naming slots and %q", tc.template, n, err, tc.problem)
		}
	}
}

func TestTemplateSizeValidation(t *testing.T) {
	for _, tc := range []struct {
		size     Size
		maxSlots int
		field    string
	}{
		{Size{Slots: -1}, 0, "templates.x.slots"},
		{Size{Slots: MaxSlots + 1}, 0, "templates.x.slots"},
		{Size{Slots: 4}, 2, "templates.x.slots"},
		{Size{}, -1, "templates.x.max_slots"},
		{Size{Replicas: MaxReplicas + 1}, 0, "templates.x.replicas"},
		{Size{CPUs: -2}, 0, "templates.x.cpus"},
		{Size{Memory: -1}, 0, "templates.x.memory"},
		{Size{Requires: map[string]string{"gpu model": "A100"}}, 0, "templates.x.requires.gpu model"},
		{Size{Requires: map[string]string{"gpu_model": ""}}, 0, "templates.x.requires.gpu_model"},
	} {
		tpl := Template{Command: []string{"x"}, Size: tc.size, MaxSlots: tc.maxSlots}
		err := tpl.Validate("templates.x")
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v max_slots %d: error %v, want one naming %s", tc.size, tc.maxSlots, err, tc.field)
		}
	}
	ok := Template{Command: []string{"x"}, Size: Size{Slots: 8, Replicas: 1, CPUs: 0.5, Memory: 1 << 30,
		Requires: map[string]string{"gpu_model": "H100"}}, MaxSlots: 8}
	if err := ok.Validate("templates.x"); err != nil {
		t.Errorf("a valid size is refused: %v", err)
	}
	// Gangs run: a template of two 2-slot members is valid.
	gang := Template{Command: []string{"x"}, Size: Size{Slots: 2, Replicas: 2}}
	if err := gang.Validate("templates.x"); err != nil {
		t.Errorf("a gang is refused: %v", err)
	}
}

// The config file writes the size inline in the template, and the stored
// spec carries it as plain fields.
func TestSizeIsInlineInConfigAndSpec(t *testing.T) {
	var tpl Template
	src := "command: [train]\nslots: 4\nmax_slots: 8\nreplicas: 2\ncpus: 6\nmemory: 32GiB\nrequires: {gpu_model: A100-80GB}\n"
	if err := yaml.Unmarshal([]byte(src), &tpl); err != nil {
		t.Fatal(err)
	}
	if tpl.Slots != 4 || tpl.MaxSlots != 8 || tpl.Replicas != 2 || tpl.CPUs != 6 || tpl.Memory != 32<<30 || tpl.Requires["gpu_model"] != "A100-80GB" {
		t.Fatalf("read %+v max_slots %d", tpl.Size, tpl.MaxSlots)
	}
	b, err := json.Marshal(Spec{Size: tpl.Size})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"slots":4`, `"replicas":2`, `"cpus":6`, `"memory":"32GiB"`, `"requires":{"gpu_model":"A100-80GB"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("spec JSON %s lacks %s", b, want)
		}
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil || back.TotalSlots() != 8 {
		t.Errorf("spec read back: %+v, %v", back.Size, err)
	}
}
