package workers_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers/gpu"
)

// TestMIGInstancesAreSlots: on a machine whose one GPU is split into two
// MIG instances (a stand-in nvidia-smi says so; there are no GPUs here),
// the worker offers two slots, and two jobs at once are each bound to an
// instance of their own by its MIG UUID, never to the parent GPU.
func TestMIGInstancesAreSlots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	devs, err := gpu.Detect(context.Background(), filepath.Join(testenv.FakeNvidiaSMIMIG(t, 1, map[int][]string{0: {"3g.40gb", "3g.40gb"}}), "nvidia-smi"))
	if err != nil {
		t.Fatal(err)
	}
	o := e.options()
	o.Slots = 0 // one per device
	o.GPUs = devs
	w := e.start(o)
	if r := e.registered(w.ID()); r.Slots != 2 || len(r.GPUs) != 2 {
		t.Fatalf("registered %d slots and GPUs %+v, want the two instances", r.Slots, r.GPUs)
	}
	a, b := e.submit(e.shareJob(0), queues.QueueCore), e.submit(e.shareJob(0), queues.QueueCore)
	seen := map[string]string{}
	for _, j := range []jobs.Job{a, b} {
		vars := strings.Fields(e.sees(j))
		if len(vars) != 4 || vars[0] != vars[1] || vars[0] != vars[2] || !strings.HasPrefix(vars[0], "MIG-") {
			t.Fatalf("%s sees %q, want one MIG instance in all three variables", j.ID, vars)
		}
		if other, dup := seen[vars[0]]; dup {
			t.Fatalf("%s and %s were both given %s", other, j.ID, vars[0])
		}
		seen[vars[0]] = j.ID
	}
	for _, k := range []int{0, 1} {
		if seen[testenv.FakeMIGUUID(0, k)] == "" {
			t.Errorf("no job was given instance %d (%s): %v", k, testenv.FakeMIGUUID(0, k), seen)
		}
	}
	e.end(a)
	e.end(b)
	e.waitGPUsFree(w, "both jobs ended")
}
