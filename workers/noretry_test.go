package workers_test

import (
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestProcessNoRetryExitCodeFailsAtOnce: a retryable job that exits with
// a code its template lists in no_retry_exit_codes fails on its first
// attempt, and the record says why no retry came.
func TestProcessNoRetryExitCodeFailsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	spec := e.shell(`echo "$BALLAST_ATTEMPT" >> "$BALLAST_PARAM_DIR/runs"; echo "bad input" >&2; exit 64`)
	spec.Retryable = true
	spec.MaxRetries = 3
	spec.NoRetryExitCodes = []int{64}
	j := e.submit(spec, queues.QueueCore)

	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateFailed || got.ExitCode == nil || *got.ExitCode != 64 || got.Retries != 0 {
		t.Fatalf("state %s exit %s retries %d, want failed with 64 and no retry", got.State, code(got), got.Retries)
	}
	if !strings.Contains(got.LastError, "no_retry_exit_codes") {
		t.Errorf("last error %q does not say why there was no retry", got.LastError)
	}
	if runs := e.read("runs"); runs != "1\n" {
		t.Errorf("runs %q, want one run", runs)
	}
}
