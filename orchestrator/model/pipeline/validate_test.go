package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"gopkg.in/yaml.v3"
)

func ptr(f float64) *float64 { return &f }

func testCatalog(t *testing.T) *jobs.Catalog {
	t.Helper()
	cat, err := jobs.NewCatalog(map[string]jobs.Template{
		"fetch": {Command: []string{"fetch", "--date=${date}"}, Params: map[string]jobs.ParamSpec{
			"date": {Type: jobs.ParamString, Required: true}}},
		"train": {Command: []string{"train", "--epochs=${epochs}"}, Params: map[string]jobs.ParamSpec{
			"epochs": {Type: jobs.ParamInt, Min: ptr(1), Default: 10}}},
		"report": {Command: []string{"report"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func good() Pipeline {
	return Pipeline{
		Schedule: "30 2 * * *",
		TimeZone: "Europe/Berlin",
		Deadline: "06:00",
		Steps: map[string]Step{
			"fetch":  {Template: "fetch", Params: map[string]any{"date": "today"}},
			"train":  {Template: "train", Params: map[string]any{"epochs": 3}, DependsOn: []string{"fetch"}},
			"report": {Template: "report", DependsOn: []string{"train"}, PostProcessing: true},
		},
	}
}

func TestValidateGood(t *testing.T) {
	if err := Validate("nightly", good(), testCatalog(t)); err != nil {
		t.Fatal(err)
	}
}

func TestValidateBad(t *testing.T) {
	tests := []struct {
		name   string
		pname  string
		change func(p *Pipeline)
		field  string
		msg    string
	}{
		{"cron out of range", "", func(p *Pipeline) { p.Schedule = "61 * * * *" }, "pipelines.nightly.schedule", "invalid cron spec"},
		{"cron too few fields", "", func(p *Pipeline) { p.Schedule = "0 2 *" }, "pipelines.nightly.schedule", "invalid cron spec"},
		{"missing cron", "", func(p *Pipeline) { p.Schedule = "" }, "pipelines.nightly.schedule", "missing"},
		{"@every", "", func(p *Pipeline) { p.Schedule = "@every 1h" }, "pipelines.nightly.schedule", "@every"},
		{"zone in the spec", "", func(p *Pipeline) { p.Schedule = "TZ=UTC 0 2 * * *" }, "pipelines.nightly.schedule", "time_zone"},
		{"unknown zone", "", func(p *Pipeline) { p.TimeZone = "Europe/Atlantis" }, "pipelines.nightly.time_zone", "unknown time zone"},
		{"unknown template", "", func(p *Pipeline) { p.Steps["report"] = Step{Template: "reprot"} }, "pipelines.nightly.steps.report.template", "unknown template"},
		{"missing template", "", func(p *Pipeline) { p.Steps["report"] = Step{} }, "pipelines.nightly.steps.report.template", "missing"},
		{"unknown dependency", "", func(p *Pipeline) { p.Steps["report"] = Step{Template: "report", DependsOn: []string{"trian"}} },
			"pipelines.nightly.steps.report.depends_on", `unknown step "trian"`},
		{"self dependency", "", func(p *Pipeline) { p.Steps["report"] = Step{Template: "report", DependsOn: []string{"report"}} },
			"pipelines.nightly.steps.report.depends_on", "depends on itself"},
		{"duplicate dependency", "", func(p *Pipeline) { p.Steps["report"] = Step{Template: "report", DependsOn: []string{"train", "train"}} },
			"pipelines.nightly.steps.report.depends_on", "listed twice"},
		{"cycle", "", func(p *Pipeline) {
			s := p.Steps["fetch"]
			s.DependsOn = []string{"report"}
			p.Steps["fetch"] = s
		}, "pipelines.nightly.steps.fetch.depends_on", "fetch -> train -> report -> fetch"},
		{"no steps", "", func(p *Pipeline) { p.Steps = nil }, "pipelines.nightly.steps", "at least one step"},
		{"bad overlap", "", func(p *Pipeline) { p.Overlap = "sometimes" }, "pipelines.nightly.overlap", "forbid, allow or replace"},
		{"bad catch-up", "", func(p *Pipeline) { p.CatchUp = "all" }, "pipelines.nightly.catch_up", "skip or latest"},
		{"bad clock deadline", "", func(p *Pipeline) { p.Deadline = "25:00" }, "pipelines.nightly.deadline", "HH:MM"},
		{"bad duration deadline", "", func(p *Pipeline) { p.Deadline = "-3h" }, "pipelines.nightly.deadline", "positive"},
		{"gibberish deadline", "", func(p *Pipeline) { p.Deadline = "soon" }, "pipelines.nightly.deadline", "neither"},
		{"param of the wrong type", "", func(p *Pipeline) {
			p.Steps["train"] = Step{Template: "train", Params: map[string]any{"epochs": "many"}}
		},
			"pipelines.nightly.steps.train.params.epochs", ""},
		{"param below min", "", func(p *Pipeline) { p.Steps["train"] = Step{Template: "train", Params: map[string]any{"epochs": 0}} },
			"pipelines.nightly.steps.train.params.epochs", ""},
		{"unknown param", "", func(p *Pipeline) { p.Steps["train"] = Step{Template: "train", Params: map[string]any{"lr": 0.1}} },
			"pipelines.nightly.steps.train.params.lr", "unknown parameter"},
		{"missing required param", "", func(p *Pipeline) { p.Steps["fetch"] = Step{Template: "fetch"} },
			"pipelines.nightly.steps.fetch.params.date", "missing required"},
		{"unencodable param", "", func(p *Pipeline) {
			p.Steps["fetch"] = Step{Template: "fetch", Params: map[string]any{"date": func() {}}}
		},
			"pipelines.nightly.steps.fetch.params.date", "cannot be passed"},
		{"bad class", "", func(p *Pipeline) { p.Steps["report"] = Step{Template: "report", Class: "gpu"} },
			"pipelines.nightly.steps.report.class", "core or burst"},
		{"bad step name", "", func(p *Pipeline) { p.Steps["Report Step"] = Step{Template: "report"} },
			"pipelines.nightly.steps.Report Step", "step name"},
		{"bad pipeline name", "Nightly Build", func(p *Pipeline) {}, "pipelines.Nightly Build", "pipeline name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := good()
			tc.change(&p)
			name := "nightly"
			if tc.pname != "" {
				name = tc.pname
			}
			err := Validate(name, p, testCatalog(t))
			var ve *jobs.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want a *jobs.ValidationError", err)
			}
			for _, fe := range ve.Problems {
				if fe.Field == tc.field && strings.Contains(fe.Message, tc.msg) {
					return
				}
			}
			t.Errorf("no problem at %s mentioning %q; got %v", tc.field, tc.msg, err)
		})
	}
}

func TestValidateReportsEverything(t *testing.T) {
	p := Pipeline{
		Schedule: "bogus",
		TimeZone: "Nowhere/Town",
		Overlap:  "maybe",
		Steps: map[string]Step{
			"a": {Template: "nope", DependsOn: []string{"b"}},
			"b": {Template: "report", DependsOn: []string{"a"}},
		},
	}
	err := Validate("p", p, testCatalog(t))
	var ve *jobs.ValidationError
	if !errors.As(err, &ve) {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	for _, fe := range ve.Problems {
		fields[fe.Field] = true
	}
	for _, f := range []string{"pipelines.p.schedule", "pipelines.p.time_zone", "pipelines.p.overlap", "pipelines.p.steps.a.template", "pipelines.p.steps.a.depends_on"} {
		if !fields[f] {
			t.Errorf("missing problem at %s; got %v", f, err)
		}
	}
	if !errors.Is(err, jobs.ErrUnknownTemplate) {
		t.Error("errors.Is(err, jobs.ErrUnknownTemplate) should hold")
	}
}

func TestValidateNilCatalog(t *testing.T) {
	err := Validate("nightly", good(), nil)
	if !errors.Is(err, jobs.ErrUnknownTemplate) {
		t.Errorf("nil catalog: %v, want unknown templates", err)
	}
}

func TestYAMLShape(t *testing.T) {
	const doc = `
schedule: "30 2 * * *"
time_zone: Europe/Berlin
deadline: "06:00"
overlap: replace
catch_up: latest
description: nightly features
steps:
  fetch:
    template: fetch
    params: {date: today}
  train:
    template: train
    params: {epochs: 5}
    depends_on: [fetch]
    class: burst
  report:
    template: report
    depends_on: [train]
    post_processing: true
`
	var p Pipeline
	if err := yaml.Unmarshal([]byte(doc), &p); err != nil {
		t.Fatal(err)
	}
	if p.TimeZone != "Europe/Berlin" || p.Overlap != OverlapReplace || p.CatchUp != CatchUpLatest ||
		!p.Steps["report"].PostProcessing || p.Steps["train"].Class != "burst" || p.Steps["train"].DependsOn[0] != "fetch" {
		t.Fatalf("decoded %+v", p)
	}
	if err := Validate("nightly", p, testCatalog(t)); err != nil {
		t.Fatal(err)
	}
	d := Pipeline{}.WithDefaults()
	if d.Overlap != OverlapForbid || d.CatchUp != CatchUpSkip {
		t.Errorf("defaults %+v", d)
	}
}
