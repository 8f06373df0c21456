package config

import (
	"strings"
	"testing"
)

const pipelineBase = `
pools:
  fixed: {kind: fixed, slots: 2}
templates:
  features:
    command: ["sh", "-c", "echo $1", "sh", "${date}"]
    params: {date: {type: string, required: true}}
    rhythm: periodic
  upload:
    command: ["true"]
`

func TestPipelinesAreValidatedWithTheirLines(t *testing.T) {
	good := pipelineBase + `
pipelines:
  nightly:
    schedule: "30 2 * * *"
    time_zone: Europe/Berlin
    deadline: "06:00"
    steps:
      build: {template: features, params: {date: today}}
      publish: {template: upload, depends_on: [build], post_processing: true}
`
	cfg, err := Parse([]byte(good), "good.yaml")
	if err != nil {
		t.Fatalf("a valid pipeline was refused: %v", err)
	}
	if p := cfg.Pipelines["nightly"]; p.Overlap != "forbid" || p.CatchUp != "skip" {
		t.Fatalf("pipeline defaults not applied: %+v", p)
	}

	bad := pipelineBase + `
pipelines:
  nightly:
    schedule: "61 2 * * *"
    steps:
      a: {template: features, params: {date: x}, depends_on: [b]}
      b: {template: features, params: {date: x}, depends_on: [a]}
      c: {template: nope}
`
	_, err = Parse([]byte(bad), "bad.yaml")
	if err == nil {
		t.Fatal("a pipeline with a bad schedule, a cycle and an unknown template was accepted")
	}
	msg := err.Error()
	for _, want := range []string{"bad.yaml:14:", "pipelines.nightly.schedule", "a -> b -> a", "pipelines.nightly.steps.c.template"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the report lacks %q:\n%s", want, msg)
		}
	}
}
