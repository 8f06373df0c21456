package cli

import (
	"strings"
	"testing"
)

// TestTraceImportPrintsGPUHours: importing the Alibaba GPU fixture says
// how many GPU-hours were read and skipped, and how each field was read,
// so the import can be checked against the raw file.
func TestTraceImportPrintsGPUHours(t *testing.T) {
	code, out, errOut := run(t, "trace", "--alibaba-gpu", "../../orchestrator/trace/testdata/openb_pod_list_small.csv")
	if code != 0 || !strings.HasPrefix(out, "submit_s,") {
		t.Fatalf("code %d err %q", code, errOut)
	}
	for _, want := range []string{
		"read 15, kept 8, skipped 7",
		"kept 3396.9 GPU-hours (slots x hours), 3333.1 with shared GPUs at their share",
		"skipped GPU-hours: never scheduled 1.0 (waited, none held), unknown qos 0.2",
		"end: trace end (no deletion_time) 2",
		"start: creation_time (no scheduled_time) 1",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}
