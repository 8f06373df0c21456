package cli

import (
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
)

// `submit --gpu-share` asks for part of one GPU through a real intake;
// a share the intake refuses is an error that names gpu_share, and the
// flag goes with a template, not with --file.
func TestSubmitAsksForAGPUShare(t *testing.T) {
	srv := testenv.NATS(t)
	f := newFlowEnv(t, srv.ClientURL())
	f.startIntake(t, srv)
	runOK(t, "submit", "trial", "lr=0.1", "--gpu-share", "0.25", "--key", "share-1", "--config", f.path)
	list, err := f.store.List(t.Context(), queues.ListOptions{Limit: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("%d jobs (%v), want 1", len(list), err)
	}
	if got := list[0].Spec.GPUShare; got != 0.25 {
		t.Errorf("the job asks for %v of a GPU, want 0.25", got)
	}
	code, _, errOut := run(t, "submit", "trial", "lr=0.1", "--gpu-share", "1.5", "--config", f.path)
	if code == 0 || !strings.Contains(errOut, "gpu_share") {
		t.Errorf("a share of 1.5: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := run(t, "submit", "--file", "jobs.jsonl", "--gpu-share", "0.5", "--config", f.path); code != 2 {
		t.Errorf("--file with --gpu-share: exit %d, want a usage error", code)
	}
}
