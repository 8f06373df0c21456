package provider

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// fakeWorker is the path of the testdata/fakeworker binary built by TestMain.
var fakeWorker string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "provider-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeWorker = filepath.Join(dir, "fakeworker")
	goBin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "go toolchain needed to build the fake worker:", err)
		os.Exit(1)
	}
	build := exec.Command(goBin, "build", "-o", fakeWorker, "./testdata/fakeworker")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build fake worker: %v\n%s", err, out)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// waitFor polls cond until it holds or the deadline passes: outcomes in
// these tests come from other processes, so there is nothing to wait on.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
