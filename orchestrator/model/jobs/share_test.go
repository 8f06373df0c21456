package jobs

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestShareMilli(t *testing.T) {
	for _, tc := range []struct {
		share float64
		milli int
	}{
		{0, 0}, {0.5, 500}, {0.25, 250}, {0.001, 1}, {0.999, 999}, {0.1 + 0.2, 300},
		// Out of range is no share at all: validation refuses it first.
		{1, 0}, {-0.5, 0}, {1.5, 0}, {math.NaN(), 0},
	} {
		if got := (Size{GPUShare: tc.share}).ShareMilli(); got != tc.milli {
			t.Errorf("ShareMilli of %v = %d, want %d", tc.share, got, tc.milli)
		}
	}
}

func TestShareValidation(t *testing.T) {
	for _, tc := range []struct {
		size     Size
		maxSlots int
		field    string
		says     string
	}{
		{Size{GPUShare: 1}, 0, "templates.x.gpu_share", "below 1"},
		{Size{GPUShare: 2}, 0, "templates.x.gpu_share", "below 1"},
		{Size{GPUShare: -0.5}, 0, "templates.x.gpu_share", "above 0"},
		{Size{GPUShare: math.NaN()}, 0, "templates.x.gpu_share", "above 0"},
		{Size{GPUShare: 0.0005}, 0, "templates.x.gpu_share", "thousandths"},
		{Size{GPUShare: 0.3333}, 0, "templates.x.gpu_share", "thousandths"},
		{Size{GPUShare: 0.5, Slots: 2}, 0, "templates.x.gpu_share", "holds one slot"},
		{Size{GPUShare: 0.5, Replicas: 2}, 0, "templates.x.gpu_share", "gang"},
		{Size{GPUShare: 0.5}, 4, "templates.x.max_slots", "shared job holds one slot"},
	} {
		tpl := Template{Command: []string{"x"}, Size: tc.size, MaxSlots: tc.maxSlots}
		err := tpl.Validate("templates.x")
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v max_slots %d: error %v, want one naming %s and saying %q", tc.size, tc.maxSlots, err, tc.field, tc.says)
		}
	}
	for _, ok := range []Size{{GPUShare: 0.5}, {GPUShare: 0.001}, {GPUShare: 0.999, Slots: 1, Replicas: 1},
		{GPUShare: 0.25, Requires: map[string]string{"gpu_model": "A100"}}} {
		tpl := Template{Command: []string{"x"}, Size: ok}
		if err := tpl.Validate("templates.x"); err != nil {
			t.Errorf("%+v is refused: %v", ok, err)
		}
	}
}

// A share alone does not make a job sized: it waits in its shared queue,
// and the GPU worker that takes it packs it (see workers/gpu).
func TestShareIsNotSized(t *testing.T) {
	if (Size{GPUShare: 0.5}).Sized() {
		t.Error("a job of half a GPU is sized; it should wait in its shared queue")
	}
	if !(Size{GPUShare: 0.5, Requires: map[string]string{"gpu_model": "A100"}}).Sized() {
		t.Error("a share that requires a label is not sized")
	}
}

func TestSubmissionCannotWidenAShare(t *testing.T) {
	cat, err := NewCatalog(map[string]Template{"half": {Command: []string{"x"}, Size: Size{GPUShare: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	two, one := 2, 1
	if _, err := cat.Resolve(Submission{Template: "half", Slots: &two}); err == nil || !strings.Contains(err.Error(), "slots") || !strings.Contains(err.Error(), "gpu_share") {
		t.Errorf("slots 2 on a half-GPU template: %v, want an error naming slots and gpu_share", err)
	}
	spec, err := cat.Resolve(Submission{Template: "half", Slots: &one})
	if err != nil || spec.ShareMilli() != 500 || spec.SlotCount() != 1 {
		t.Errorf("slots 1 on a half-GPU template: %+v, %v", spec.Size, err)
	}
}

// The config writes gpu_share inline in the template, and the stored spec
// carries it as a plain field.
func TestShareInConfigAndSpec(t *testing.T) {
	var tpl Template
	if err := yaml.Unmarshal([]byte("command: [infer]\ngpu_share: 0.25\n"), &tpl); err != nil {
		t.Fatal(err)
	}
	if tpl.ShareMilli() != 250 {
		t.Fatalf("read gpu_share %v", tpl.GPUShare)
	}
	b, err := Spec{Size: tpl.Size}.AppendJSON(nil)
	if err != nil || !strings.Contains(string(b), `"gpu_share":0.25`) {
		t.Fatalf("spec JSON %s (%v) lacks gpu_share", b, err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil || back.ShareMilli() != 250 {
		t.Errorf("spec read back: %+v, %v", back.Size, err)
	}
}

// A submission may ask for a share in place of its template's whole GPU
// or share, within the same rules, with errors naming gpu_share.
func TestSubmissionShare(t *testing.T) {
	cat, err := NewCatalog(map[string]Template{
		"one":  {Command: []string{"x"}},
		"half": {Command: []string{"x"}, Size: Size{GPUShare: 0.5}},
		"four": {Command: []string{"x"}, Size: Size{Slots: 4}},
		"wide": {Command: []string{"x"}, MaxSlots: 8},
		"gang": {Command: []string{"x"}, Size: Size{Replicas: 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	share := func(x float64) *float64 { return &x }
	two := 2
	for _, tc := range []struct {
		sub   Submission
		milli int    // when accepted
		says  string // part of the error, when refused
	}{
		{Submission{Template: "one", GPUShare: share(0.25)}, 250, ""},
		{Submission{Template: "half", GPUShare: share(0.75)}, 750, ""},
		{Submission{Template: "wide", GPUShare: share(0.5)}, 500, ""},
		{Submission{Template: "one", GPUShare: share(0)}, 0, "gpu_share: is 0"},
		{Submission{Template: "one", GPUShare: share(1)}, 0, "gpu_share: is 1"},
		{Submission{Template: "one", GPUShare: share(0.0001)}, 0, "thousandths"},
		{Submission{Template: "four", GPUShare: share(0.5)}, 0, "slots 4"},
		{Submission{Template: "wide", GPUShare: share(0.5), Slots: &two}, 0, "slots 2"},
		{Submission{Template: "gang", GPUShare: share(0.5)}, 0, "replicas 2"},
	} {
		spec, err := cat.Resolve(tc.sub)
		if tc.says == "" {
			if err != nil || spec.ShareMilli() != tc.milli {
				t.Errorf("%s with gpu_share %v: %v share %d, want %d", tc.sub.Template, *tc.sub.GPUShare, err, spec.ShareMilli(), tc.milli)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "gpu_share") || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s with gpu_share %v: %v, want an error naming gpu_share and saying %q", tc.sub.Template, *tc.sub.GPUShare, err, tc.says)
		}
	}
	s, err := DecodeSubmission([]byte(`{"template": "one", "gpu_share": 0.5}`))
	if err != nil || s.GPUShare == nil || *s.GPUShare != 0.5 {
		t.Errorf("DecodeSubmission: %+v %v", s, err)
	}
}
