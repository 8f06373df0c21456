package workers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
	"github.com/ballastdev/ballast/workers/gpu"
)

// The GPUs in these tests come from a stand-in nvidia-smi (testenv) that
// prints what a 4-GPU A100 machine prints: there are no GPUs here, and the
// jobs only look at the variables that bind them.

// fakeGPUs detects the stand-in's n GPUs as `ballast worker --gpus auto`
// does.
func fakeGPUs(t *testing.T, n int) []gpu.Device {
	t.Helper()
	devs, err := gpu.Detect(context.Background(), testenv.FakeNvidiaSMI(t, n)+"/nvidia-smi")
	if err != nil {
		t.Fatal(err)
	}
	devs, err = gpu.Select(devs, "auto")
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

// registered returns the worker's registry entry.
func (e *env) registered(id string) queues.WorkerInfo {
	e.t.Helper()
	ws, err := registry.New(e.store).Workers(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, w := range ws {
		if w.ID == id {
			return w
		}
	}
	e.t.Fatalf("worker %s is not registered (%d are)", id, len(ws))
	return queues.WorkerInfo{}
}

// holders maps each GPU index of the registry entry to its job ("" free).
func holders(w queues.WorkerInfo) map[int]string {
	out := map[int]string{}
	for _, g := range w.GPUs {
		out[g.Index] = g.Job
	}
	return out
}

// waitGPUsFree waits until the registry shows every GPU of the worker free.
func (e *env) waitGPUsFree(w *workers.Worker, after string) {
	e.t.Helper()
	testenv.Eventually(e.t, wait, "the GPUs to be free after "+after, func() bool {
		for _, g := range e.registered(w.ID()).GPUs {
			if g.Job != "" {
				return false
			}
		}
		return true
	})
}

func TestGPUWorkerRegistersItsGPUs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	o.Slots = 0 // one per GPU
	o.GPUs = fakeGPUs(t, 4)
	// The pool's configured labels are reported too, but the GPUs decide
	// gpu_model.
	o.Labels = map[string]string{"zone": "b", queues.LabelGPUModel: "configured-wrong"}
	w := e.start(o)
	got := e.registered(w.ID())
	if got.Labels["zone"] != "b" {
		t.Errorf("labels %v lack the configured zone", got.Labels)
	}
	if got.CPUs <= 0 || got.Memory <= 0 {
		t.Errorf("registered CPUs %v memory %d: want the machine's", got.CPUs, got.Memory)
	}
	if got.Slots != 4 || len(got.GPUs) != 4 {
		t.Fatalf("registered with %d slots and GPUs %+v, want 4 of each", got.Slots, got.GPUs)
	}
	if m := got.Labels[queues.LabelGPUModel]; m != testenv.FakeGPUModel {
		t.Errorf("gpu_model label %q, want %q (labels %v)", m, testenv.FakeGPUModel, got.Labels)
	}
	for i, g := range got.GPUs {
		want := queues.GPUInfo{Index: i, UUID: testenv.FakeGPUUUID(i), Name: testenv.FakeGPUModel, MemoryMiB: 81920}
		if g != want {
			t.Errorf("GPU %d registered as %+v, want %+v", i, g, want)
		}
	}
}

// TestGPUJobsGetTheirOwnGPUs runs two jobs at once on a GPU worker: each
// sees one GPU, not the other's, by UUID in all three variables; the
// registry says which job holds which; both GPUs are free once they end.
func TestGPUJobsGetTheirOwnGPUs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	o.Slots = 2
	o.GPUs = fakeGPUs(t, 4)
	w := e.start(o)
	spec := e.shell(`env | grep -E '^(CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES|BALLAST_GPUS)=' | sort
touch "$BALLAST_PARAM_DIR/$BALLAST_JOB_ID.up"
while [ ! -f "$BALLAST_PARAM_DIR/go" ]; do sleep 0.02; done`)
	a, b := e.submit(spec, queues.QueueCore), e.submit(spec, queues.QueueCore)
	e.waitFile(a.ID+".up", wait)
	e.waitFile(b.ID+".up", wait)
	// Both run now: the registry shows each on a GPU of its own.
	testenv.Eventually(t, wait, "the registry to show both jobs on GPUs", func() bool {
		h := holders(e.registered(w.ID()))
		return h[0] != "" && h[1] != "" && h[0] != h[1] && (h[0] == a.ID || h[0] == b.ID) && (h[1] == a.ID || h[1] == b.ID) &&
			h[2] == "" && h[3] == ""
	})
	e.touch("go")
	seen := map[string]string{}
	for _, j := range []jobs.Job{a, b} {
		if got := e.waitTerminal(j.ID, wait); got.State != jobs.StateSucceeded {
			t.Fatalf("%s: state %s error %q", j.ID, got.State, got.LastError)
		}
		var lines []string
		for _, l := range e.logs(j.ID) {
			lines = append(lines, l.Text)
		}
		if len(lines) != 3 {
			t.Fatalf("%s printed %q, want its three device variables", j.ID, lines)
		}
		uuid := strings.TrimPrefix(lines[0], "BALLAST_GPUS=")
		want := []string{"BALLAST_GPUS=" + uuid, "CUDA_VISIBLE_DEVICES=" + uuid, "NVIDIA_VISIBLE_DEVICES=" + uuid}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s sees\n%s\nwant one GPU in all three:\n%s", j.ID, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
		if uuid != testenv.FakeGPUUUID(0) && uuid != testenv.FakeGPUUUID(1) {
			t.Errorf("%s was given %q, want GPU 0 or 1 (lowest first)", j.ID, uuid)
		}
		if other, dup := seen[uuid]; dup {
			t.Errorf("%s and %s were both given %s", other, j.ID, uuid)
		}
		seen[uuid] = j.ID
	}
	e.waitGPUsFree(w, "both jobs succeeded")
}

// TestGPUsAreFreedHoweverTheAttemptEnds runs jobs one after another on a
// worker with one GPU: each must get it, so each attempt before it gave it
// back, whether it succeeded, failed or was killed.
func TestGPUsAreFreedHoweverTheAttemptEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	o.Slots = 1
	o.GPUs = fakeGPUs(t, 1)
	w := e.start(o)
	want := "CUDA_VISIBLE_DEVICES=" + testenv.FakeGPUUUID(0)
	sees := func(j jobs.Job) {
		t.Helper()
		if !hasLine(e.logs(j.ID), "stdout", want) {
			t.Errorf("%s did not see %s: %+v", j.ID, want, e.logs(j.ID))
		}
	}

	ok := e.submit(e.shell(`echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"`), queues.QueueCore)
	if got := e.waitTerminal(ok.ID, wait); got.State != jobs.StateSucceeded {
		t.Fatalf("state %s error %q, want succeeded", got.State, got.LastError)
	}
	sees(ok)
	e.waitGPUsFree(w, "a success")

	failed := e.submit(e.shell(`echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"; exit 3`), queues.QueueCore)
	if got := e.waitTerminal(failed.ID, wait); got.State != jobs.StateFailed {
		t.Fatalf("state %s error %q, want failed", got.State, got.LastError)
	}
	sees(failed)
	e.waitGPUsFree(w, "a failure")

	// Cancelled, it ignores SIGTERM and is killed after its grace period.
	killed := e.submit(e.shell(`trap '' TERM
echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
touch "$BALLAST_PARAM_DIR/up"
while :; do sleep 0.05; done`), queues.QueueCore)
	e.waitFile("up", wait)
	if h := holders(e.registered(w.ID())); h[0] != killed.ID {
		testenv.Eventually(t, wait, "the registry to show the job on the GPU", func() bool {
			return holders(e.registered(w.ID()))[0] == killed.ID
		})
	}
	if res, err := e.store.Cancel(context.Background(), killed.ID); err != nil || res != queues.CancelRequested {
		t.Fatalf("Cancel = %q, %v", res, err)
	}
	if got := e.waitTerminal(killed.ID, wait); got.State != jobs.StateCancelled {
		t.Fatalf("state %s error %q, want cancelled", got.State, got.LastError)
	}
	sees(killed)
	e.waitGPUsFree(w, "a kill")

	last := e.submit(e.shell(`echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"`), queues.QueueCore)
	if got := e.waitTerminal(last.ID, wait); got.State != jobs.StateSucceeded {
		t.Fatalf("after the kill: state %s error %q, want succeeded on the freed GPU", got.State, got.LastError)
	}
	sees(last)
}

// TestNoDeviceVariablesOffGPUWorkers: a worker without GPUs sets none of
// the device variables (the job's environment is built, so it inherits
// none either).
func TestNoDeviceVariablesOffGPUWorkers(t *testing.T) {
	t.Setenv("CUDA_VISIBLE_DEVICES", "0,1") // the worker's own: not the job's
	e := newEnv(t)
	e.start(e.options())
	j := e.submit(e.shell(`env | grep -E '^(CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES|BALLAST_GPUS)=' || echo none`), queues.QueueCore)
	if got := e.waitTerminal(j.ID, wait); got.State != jobs.StateSucceeded {
		t.Fatalf("state %s error %q", got.State, got.LastError)
	}
	if l := e.logs(j.ID); len(l) != 1 || l[0].Text != "none" {
		t.Errorf("a job off GPU workers sees device variables: %+v", l)
	}
}

// TestGPUHandlerSeesItsGPUs: an in-process handler on a GPU worker is told
// its GPUs in Run.GPUs (it shares the worker's process, so no variable can
// hide the others from it).
func TestGPUHandlerSeesItsGPUs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	o.GPUs = fakeGPUs(t, 2)
	got := make(chan []gpu.Device, 1)
	o.Handlers = map[string]workers.Handler{"train": func(_ context.Context, r *workers.Run) error {
		got <- r.GPUs
		return nil
	}}
	e.start(o)
	j := e.submit(handlerSpec("train"), queues.QueueCore)
	if s := e.waitTerminal(j.ID, wait); s.State != jobs.StateSucceeded {
		t.Fatalf("state %s error %q", s.State, s.LastError)
	}
	if devs := <-got; len(devs) != 1 || devs[0].UUID != testenv.FakeGPUUUID(0) {
		t.Errorf("the handler was given %+v, want GPU 0", devs)
	}
}
