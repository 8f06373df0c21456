package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/config"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	code, _, errOut := run(t, "frobnicate")
	if code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if code, out, _ := run(t, "help"); code != 0 || !strings.Contains(out, "validate-config") {
		t.Fatalf("help: code %d, out %q", code, out)
	}
}

func TestParseParamsTypesValues(t *testing.T) {
	p, err := parseParams([]string{"epochs=10", "lr=0.5", "name=world", "flag=true", `quoted="10"`, "empty="})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"epochs": "10", "lr": "0.5", "name": `"world"`, "flag": "true", "quoted": `"10"`, "empty": `""`}
	for k, v := range want {
		if string(p[k]) != v {
			t.Errorf("%s = %s, want %s", k, p[k], v)
		}
	}
	if _, err := parseParams([]string{"novalue"}); err == nil {
		t.Error("a pair without = was accepted")
	}
	if _, err := parseParams([]string{"a=1", "a=2"}); err == nil {
		t.Error("a repeated parameter was accepted")
	}
}

func TestValidateConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := writeConfig(good, config.Dev()); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "validate-config", good); code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("good config: code %d out %q err %q", code, out, errOut)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("pools:\n  fixed:\n    kind: fixed\n    slots: -1\nwatermarks:\n  high: 0.3\n  low: 0.5\n"), 0o644)
	code, out, errOut := run(t, "validate-config", bad)
	if code != 1 {
		t.Fatalf("bad config exit %d, want 1", code)
	}
	if !strings.Contains(out, "bad.yaml:4:") || !strings.Contains(out, "pools.fixed.slots") {
		t.Errorf("slots problem not reported with its line:\n%s", out)
	}
	if !strings.Contains(out, "watermarks") {
		t.Errorf("watermark problem not reported:\n%s", out)
	}
	if !strings.Contains(errOut, "problem(s)") {
		t.Errorf("stderr %q", errOut)
	}
	if code, _, _ := run(t, "validate-config"); code != 2 {
		t.Errorf("no file: exit %d, want 2", code)
	}
}

func TestExampleJobCheckpointsAndResumes(t *testing.T) {
	record := filepath.Join(t.TempDir(), "steps")
	code, out, errOut := run(t, "example-job", "--steps", "4", "--step-time", "1ms", "--checkpoint-every", "2", "--record", record)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `{"checkpoint":"step=2"}`) || !strings.Contains(out, `{"checkpoint":"step=4"}`) {
		t.Fatalf("checkpoints missing:\n%s", out)
	}
	t.Setenv("BALLAST_RESUME_FROM", "step=2")
	t.Setenv("BALLAST_ATTEMPT", "2")
	code, out, _ = run(t, "example-job", "--steps", "4", "--step-time", "1ms", "--record", record)
	if code != 0 || !strings.Contains(out, "resuming after step 2") || strings.Contains(out, "step 1/4") {
		t.Fatalf("resume: code %d\n%s", code, out)
	}
	b, _ := os.ReadFile(record)
	// One "ATTEMPT STEP" line per step; the first run had no BALLAST_ATTEMPT.
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 6 || lines[4] != "2 3" || lines[5] != "2 4" {
		t.Fatalf("record %q", lines)
	}
	t.Setenv("BALLAST_RESUME_FROM", "garbage")
	if code, _, errOut := run(t, "example-job", "--steps", "1", "--step-time", "1ms"); code != 1 || !strings.Contains(errOut, "not a checkpoint") {
		t.Fatalf("bad resume point: code %d %q", code, errOut)
	}
}

func TestFlagsMayFollowPositionalArguments(t *testing.T) {
	for _, args := range [][]string{
		{"--wait", "hello", "name=you"},
		{"hello", "name=you", "--wait"},
		{"hello", "--wait", "name=you"},
	} {
		fs := newFlags(&env{out: io.Discard, errOut: io.Discard}, "t", "t")
		wait := fs.Bool("wait", false, "")
		if err := parse(fs, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !*wait || strings.Join(fs.Args(), " ") != "hello name=you" {
			t.Errorf("%v: wait=%v args=%q", args, *wait, fs.Args())
		}
	}
	fs := newFlags(&env{out: io.Discard, errOut: io.Discard}, "t", "t")
	wait := fs.Bool("wait", false, "")
	if err := parse(fs, []string{"hello", "--", "--wait", "x"}); err != nil {
		t.Fatal(err)
	}
	if *wait || strings.Join(fs.Args(), " ") != "hello --wait x" {
		t.Errorf("after --: wait=%v args=%q", *wait, fs.Args())
	}
	if err := parse(newFlags(&env{out: io.Discard, errOut: io.Discard}, "t", "t"), []string{"x", "--nope"}); err == nil {
		t.Error("an unknown flag after a positional was accepted")
	}
}

// TestValidateConfigWarnsOfUnsetSecrets: the shipped example validates as
// it is, on a machine without its secrets, with one warning per secret;
// --strict refuses it there.
func TestValidateConfigWarnsOfUnsetSecrets(t *testing.T) {
	for _, k := range []string{"BALLAST_REDIS_PASSWORD", "BALLAST_NATS_TOKEN", "BALLAST_API_TOKEN"} {
		t.Setenv(k, "")
	}
	example := filepath.Join("..", "..", "deploy", "ballast.example.yaml")
	code, out, errOut := run(t, "validate-config", example)
	if code != 0 || strings.Count(out, "warning: ") != 3 || !strings.Contains(out, "BALLAST_NATS_TOKEN is not set") || !strings.Contains(out, "ok (") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "checkpoints travel through s3://ballast-checkpoints/prod?region=eu-west-1 (keep 3, chunks of 8 MiB, grace 24h0m0s)") {
		t.Errorf("validate-config does not say where checkpoints go:\n%s", out)
	}
	if code, _, errOut := run(t, "validate-config", "--strict", example); code != 1 || !strings.Contains(errOut, "3 warning(s)") {
		t.Errorf("--strict: exit %d %q", code, errOut)
	}
}
