package cli

import (
	"strings"
	"testing"

	"github.com/ballastdev/ballast/queues"
)

func TestIsolationOutputSaysWhatIsAndIsNotInForce(t *testing.T) {
	iso := &queues.Isolation{Requested: "auto", Mode: "v1", Reason: "v1 because cgroup v2 has no controllers",
		Limits: []queues.LimitState{
			{Group: "burst", Limit: "cpu", Value: "2 cores", InForce: true},
			{Group: "burst", Limit: "egress", Value: "50 MiB/s", Reason: "the kernel has no cgroup tc classifier"},
		}}
	if got := isolationSummary(iso); got != "v1 1/2 limits" {
		t.Errorf("summary %q", got)
	}
	if got := isolationSummary(nil); got != "-" {
		t.Errorf("summary of a worker reporting none: %q", got)
	}
	var b strings.Builder
	writeIsolation(&b, iso)
	out := b.String()
	for _, want := range []string{
		"isolation: v1 (requested auto): v1 because cgroup v2 has no controllers",
		"burst", "cpu", "2 cores", "in force",
		"egress", "50 MiB/s", "NOT in force: the kernel has no cgroup tc classifier",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
