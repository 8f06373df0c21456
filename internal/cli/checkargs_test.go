package cli

import (
	"context"
	"strings"
	"testing"
)

func TestCheckArgs(t *testing.T) {
	tool := map[string]Tool{"bench": {Summary: "a tool", Run: func(ctx context.Context, inv *Invocation, args []string) error {
		fs := inv.Flags("bench", "bench [--runs N]")
		fs.Int("runs", 3, "runs")
		return inv.Parse(fs, args)
	}}}
	good := []string{
		"dev",
		"dev --scenario --spot-reclaim-rate 20",
		"submit hello name=you --wait",
		"jobs --template hello --since 1h",
		"jobs show JOB_ID",
		"templates show steps",
		"sweep submit deploy/examples/sweep.json --wait",
		"sweep",
		"chaos run --jobs 1000 -o json",
		"pipelines runs features",
		"plan --history 336h",
		"cost --window 24h --by team",
		"migrate-keys --config /etc/ballast/ballast.yaml --dry-run",
		"help submit",
		"--version",
		"submit hello -- --wait",
	}
	for _, line := range good {
		if err := CheckArgs(strings.Fields(line), nil); err != nil {
			t.Errorf("%q: %v", line, err)
		}
	}
	bad := map[string]string{
		"sbumit hello":                       "did you mean submit",
		"submit hello --wiat":                "wiat",
		"jobs --since":                       "since",
		"chaos run --jobs many":              "jobs",
		"chaos fly":                          "fly",
		"pipelines bogus":                    "bogus",
		"cost --window 24h --by team --nope": "nope",
		"bench --runs 3":                     "unknown command",
		"help sbumit":                        "sbumit",
	}
	for line, want := range bad {
		err := CheckArgs(strings.Fields(line), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error naming %q", line, err, want)
		}
	}
	if err := CheckArgs([]string{"bench", "--runs", "3"}, tool); err != nil {
		t.Errorf("a tool's flags: %v", err)
	}
	if err := CheckArgs([]string{"bench", "--runs", "x"}, tool); err == nil {
		t.Error("a tool's bad flag value passed")
	}
}
