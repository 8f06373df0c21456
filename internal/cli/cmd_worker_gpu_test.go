package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
)

// TestWorkerGPUsAuto starts `ballast worker --gpus auto` on a machine whose
// nvidia-smi is a stand-in (testenv) printing what a 4-GPU A100 machine
// prints; there are no GPUs here. The worker registers a slot per GPU, its
// GPUs and its gpu_model label, and `ballast status` shows them.
func TestWorkerGPUsAuto(t *testing.T) {
	testenv.FakeGPUPath(t, 4)
	f := newFlowEnv(t, unreachableNATS)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"worker", "--config", f.path, "--pool", "fixed", "--gpus", "auto", "--isolation", "off",
			"--cpus", "12", "--memory", "48GiB"}, &out, &errOut)
	}()
	var w queues.WorkerInfo
	testenv.Eventually(t, 10*time.Second, "the GPU worker to register", func() bool {
		ws, err := registry.New(f.store).Workers(context.Background())
		if err != nil || len(ws) != 1 {
			return false
		}
		w = ws[0]
		return true
	})
	if w.Slots != 4 || len(w.GPUs) != 4 || w.Labels[queues.LabelGPUModel] != testenv.FakeGPUModel {
		t.Errorf("registered with %d slots, GPUs %+v, labels %v; want 4 A100s and a slot each", w.Slots, w.GPUs, w.Labels)
	}
	if w.CPUs != 12 || w.Memory != 48<<30 {
		t.Errorf("registered CPUs %v memory %d; want --cpus 12 and --memory 48GiB", w.CPUs, w.Memory)
	}
	for i, g := range w.GPUs {
		if g.Index != i || g.UUID != testenv.FakeGPUUUID(i) || g.Job != "" {
			t.Errorf("GPU %d registered as %+v", i, g)
		}
	}
	code, st, stErr := run(t, "status", "--config", f.path)
	if want := w.ID + " gpus 0:- 1:- 2:- 3:-  (" + testenv.FakeGPUModel + ")"; code != 0 || !strings.Contains(st, want) {
		t.Errorf("status (code %d, %s) lacks %q:\n%s", code, stErr, want, st)
	}
	code, st, _ = run(t, "status", "--config", f.path, "-o", "json")
	if code != 0 || !strings.Contains(st, `"gpu_model": "`+testenv.FakeGPUModel+`"`) || !strings.Contains(st, `"uuid": "`+testenv.FakeGPUUUID(3)+`"`) {
		t.Errorf("status -o json lacks the GPUs and labels:\n%s", st)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("worker exited %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "gpus: 4 ("+testenv.FakeGPUModel+"), a slot each") {
		t.Errorf("worker output lacks its GPUs:\n%s", out.String())
	}
}

// TestWorkerGPUsRefused: --gpus errors say what to fix, before anything
// connects.
func TestWorkerGPUsRefused(t *testing.T) {
	testenv.FakeGPUPath(t, 2)
	f := newFlowEnv(t, unreachableNATS)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--gpus", "2"}, 2, "--gpus: no GPU with index 2 on this machine (it has 0, 1)"},
		{[]string{"--gpus", "0,0"}, 2, "named twice"},
		{[]string{"--gpus", "auto", "--slots", "3"}, 2, "--slots 3 is more than the 2 GPUs of --gpus auto"},
		{[]string{"--gpus", ""}, 2, "--gpus: empty"},
		{[]string{"--gpu-mps"}, 2, "--gpu-mps needs --gpus"},
	} {
		args := append([]string{"worker", "--config", f.path, "--isolation", "off"}, c.args...)
		code, _, errOut := run(t, args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: code %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
	t.Setenv("PATH", t.TempDir()) // no nvidia-smi anywhere
	code, _, errOut := run(t, "worker", "--config", f.path, "--gpus", "0")
	if code == 0 || !strings.Contains(errOut, "nvidia-smi not found") {
		t.Errorf("--gpus without nvidia-smi: code %d, stderr %q", code, errOut)
	}
}

func TestGPULine(t *testing.T) {
	w := queues.WorkerInfo{ID: "w-1", Labels: map[string]string{queues.LabelGPUModel: "NVIDIA A100-SXM4-80GB"},
		GPUs: []queues.GPUInfo{{Index: 0, Job: "job-abc"}, {Index: 1}, {Index: 2, Job: "job-x,job-y", Share: 750}, {Index: 3, Job: "job-def"}}}
	var b bytes.Buffer
	writeGPUs(&b, []queues.WorkerInfo{{ID: "cpu-1"}, w})
	if want := "\nw-1 gpus 0:job-abc 1:- 2:job-x,job-y(0.75) 3:job-def  (NVIDIA A100-SXM4-80GB)\n"; b.String() != want {
		t.Errorf("writeGPUs wrote %q, want %q", b.String(), want)
	}
}

// --cpus and --memory are checked before anything starts.
func TestWorkerCapacityFlagsAreChecked(t *testing.T) {
	for _, args := range [][]string{{"--cpus", "-1"}, {"--memory", "lots"}} {
		code, _, errOut := run(t, append([]string{"worker", "--pool", "fixed"}, args...)...)
		if code != 2 || !strings.Contains(errOut, args[0]) {
			t.Errorf("worker %v: exit %d, stderr %q; want a usage error naming %s", args, code, errOut, args[0])
		}
	}
}
