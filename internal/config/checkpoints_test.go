package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/workers/checkpoint/storespec"
)

// TestCheckpointsAbsent: a config without the section keeps checkpoints
// on each worker, and reads back with no section at all.
func TestCheckpointsAbsent(t *testing.T) {
	cfg, err := Parse([]byte(fixedPool), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Checkpoints.Enabled() || cfg.Checkpoints != (CheckpointsConfig{}) {
		t.Errorf("checkpoints = %+v, want the empty section", cfg.Checkpoints)
	}
}

func TestCheckpointsDefaults(t *testing.T) {
	cfg, err := Parse([]byte(fixedPool+`
checkpoints:
  store: s3://bucket/ballast?region=eu-west-1
`), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := CheckpointsConfig{Store: "s3://bucket/ballast?region=eu-west-1", Keep: 3, ChunkSize: 8 << 20, Concurrency: 8,
		Grace: jobs.Duration(storespec.DefaultGrace)}
	if cfg.Checkpoints != want {
		t.Errorf("checkpoints = %+v, want %+v", cfg.Checkpoints, want)
	}
}

// TestCheckpointsProblems: each bad value is reported at its field and
// line, with what to do.
func TestCheckpointsProblems(t *testing.T) {
	cases := []struct{ name, doc, field, msg string }{
		{"unknown scheme", `
checkpoints:
  store: ftp://host/x # <-
`, "checkpoints.store", "not one of s3://"},
		{"no bucket", `
checkpoints:
  store: s3:///prefix # <-
`, "checkpoints.store", "no bucket"},
		{"relative file path", `
checkpoints:
  store: file://relative/dir # <-
`, "checkpoints.store", "three slashes"},
		{"credentials in the URL", `
checkpoints:
  store: s3://AKIA:secret@bucket/x # <-
`, "checkpoints.store", "never from the config"},
		{"keep out of range", `
checkpoints:
  store: file:///var/lib/ballast/store
  keep: 1000 # <-
`, "checkpoints.keep", "out of range"},
		{"chunk too small", `
checkpoints:
  store: gs://bucket
  chunk_size: 1KiB # <-
`, "checkpoints.chunk_size", "64KiB to 1GiB"},
		{"concurrency", `
checkpoints:
  store: azblob://container/p
  concurrency: -2 # <-
`, "checkpoints.concurrency", "out of range"},
		{"grace too short", `
checkpoints:
  store: gs://bucket
  grace: 1m # <-
`, "checkpoints.grace", "at least 10m"},
		{"store credentials passed to a job", `
checkpoints:
  store: s3://bucket/x
templates:
  t:
    command: ["true"]
    pass_env:
      - AWS_SECRET_ACCESS_KEY # <-
`, "templates.t.pass_env[0]", "jobs never see them"},
		{"tuning without a store", `
checkpoints: # <-
  keep: 5
`, "checkpoints.store", "missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := fixedPool + c.doc
			_, err := Parse([]byte(doc), "c.yaml")
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Parse = %v, want Problems", err)
			}
			if len(ps) != 1 {
				t.Fatalf("%d problems, want 1:\n%v", len(ps), err)
			}
			p := ps[0]
			if p.Field != c.field || !strings.Contains(p.Message, c.msg) {
				t.Errorf("problem %v, want field %s with %q", p, c.field, c.msg)
			}
			if line := wantLine(t, doc); p.Line != line {
				t.Errorf("line %d, want %d (%v)", p.Line, line, p)
			}
			if strings.Contains(p.Message, "secret") {
				t.Errorf("the message repeats the URL's password: %v", p)
			}
		})
	}
}
