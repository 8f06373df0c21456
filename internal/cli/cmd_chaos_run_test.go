package cli

import (
	"strings"
	"testing"
)

// TestChaosSubcommandsAreListed: `chaos` alone or with an unknown
// subcommand is a usage error naming both subcommands, and bad `chaos run`
// flags are refused before anything starts.
func TestChaosSubcommandsAreListed(t *testing.T) {
	for _, args := range [][]string{{"chaos"}, {"chaos", "meteor"}} {
		code, _, errOut := run(t, args...)
		if code != 2 || !strings.Contains(errOut, "chaos spot-notice") || !strings.Contains(errOut, "chaos run") {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chaos", "run", "--faults", "worker-kill,meteor"}, `unknown fault "meteor"`},
		{[]string{"chaos", "run", "--jobs", "0"}, "jobs: 0"},
		{[]string{"chaos", "run", "--slots", "0"}, "at least 1"},
		{[]string{"chaos", "run", "--workers", "1"}, "at least 2"},
		{[]string{"chaos", "run", "-o", "yaml"}, "use table or json"},
		{[]string{"chaos", "run", "extra"}, "takes no arguments"},
	} {
		code, _, errOut := run(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: code %d, stderr %q, want it to say %q", c.args, code, errOut, c.want)
		}
	}
}

// TestChaosRunRefusesATestBinary: with valid flags, `chaos run` inside a
// test binary stops before starting anything, rather than re-executing
// the test binary as controllers and workers.
func TestChaosRunRefusesATestBinary(t *testing.T) {
	code, _, errOut := run(t, "chaos", "run", "--jobs", "1")
	if code != 1 || !strings.Contains(errOut, "is a test binary") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}
