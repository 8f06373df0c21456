package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
)

// TestSubmitFileSendsBatches: `submit --file` records every line's job
// through a real intake, a second run finds them all by their keys, and a
// file with a bad line sends nothing and names the line.
func TestSubmitFileSendsBatches(t *testing.T) {
	srv := testenv.NATS(t)
	f := newFlowEnv(t, srv.ClientURL())
	f.startIntake(t, srv)
	dir := t.TempDir()
	var b strings.Builder
	const n = 1200
	for i := range n {
		fmt.Fprintf(&b, "{\"template\":\"trial\",\"params\":{\"lr\":0.%d},\"idempotency_key\":\"line-%d\"}\n", i%10, i)
		if i == 600 {
			b.WriteString("\n") // blank lines are skipped
		}
	}
	jobsFile := filepath.Join(dir, "jobs.jsonl")
	if err := os.WriteFile(jobsFile, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runOK(t, "submit", "--file", jobsFile, "--config", f.path)
	if !strings.Contains(out, fmt.Sprintf("%d jobs: %d new, 0 already submitted", n, n)) {
		t.Fatalf("first run: %q", out)
	}
	list, err := f.store.List(t.Context(), queues.ListOptions{Limit: 1000})
	if err != nil || len(list) != 1000 {
		t.Fatalf("%d jobs listed (%v), want the newest 1000 of %d", len(list), err, n)
	}
	if out := runOK(t, "submit", "--file", jobsFile, "--config", f.path); !strings.Contains(out, fmt.Sprintf("%d jobs: 0 new, %d already submitted", n, n)) {
		t.Fatalf("second run: %q", out)
	}

	badFile := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(badFile, []byte("{\"template\":\"trial\",\"params\":{\"lr\":0.1}}\n{\"templat\":\"trial\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "submit", "--file", badFile, "--config", f.path)
	if code != 1 || !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, "templat") || !strings.Contains(errOut, "nothing was sent") {
		t.Fatalf("bad file: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := run(t, "submit", "--file", jobsFile, "trial", "--config", f.path); code != 2 {
		t.Fatalf("--file with a template: exit %d, want a usage error", code)
	}
}
