package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// startOneGPUWorker starts `ballast worker --gpus auto` of the fixed pool
// on a machine whose stand-in nvidia-smi lists one A100 (there are no GPUs
// on the test machines), and waits until it registered its one slot.
func (r *hybridRig) startOneGPUWorker(id string) {
	r.t.Helper()
	env := []string{"PATH=" + testenv.FakeNvidiaSMI(r.t, 1) + ":" + os.Getenv("PATH")}
	startChildEnv(r.t, r.bin, filepath.Join(r.dir, id+".log"), env,
		"worker", "--config", r.cfgPath, "--pool", "fixed", "--id", id, "--gpus", "auto")
	testenv.Eventually(r.t, 15*time.Second, "the GPU worker registered with one GPU", func() bool {
		for _, w := range r.workers() {
			if w.ID == id && w.Slots == 1 && len(w.GPUs) == 1 && w.PlaceQueue != "" {
				return true
			}
		}
		return false
	})
}

// TestHalfGPUJobsShareAGPUUnderTheController runs the shared-GPU scenario
// through the ballast binary, with the controller ticking and the
// template's gpu_share read from the config file: on a worker of one GPU,
// two half-GPU jobs run at once on it, a third half starts only once one
// of them has ended, and a whole-GPU job submitted behind it only once
// every half has. Each job appends what it saw and when to a marks file,
// so the order is read from the jobs themselves.
func TestHalfGPUJobsShareAGPUUnderTheController(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	r := newHybridRigWith(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 1, PricePerSlotHour: 1},
	}, 1.0, 0.4, func(c *config.Config) {
		whole := gpuMark()
		whole.MaxSlots = 0
		half := whole
		half.GPUShare = 0.5
		c.Templates["gpu-mark"], c.Templates["gpu-half"] = whole, half
	})
	r.startOneGPUWorker("gpu-1")
	r.startController("ctl-1", r.capacity(nil))

	record := filepath.Join(r.dir, "share.marks")
	a := r.submitShare("gpu-half", "half-a", record, 2)
	b := r.submitShare("gpu-half", "half-b", record, 2)
	c := r.submitShare("gpu-half", "half-c", record, 0.5)
	w := r.submitShare("gpu-mark", "whole", record, 0.5)
	recs := r.waitAllSucceeded([]string{a, b, c, w}, 60*time.Second)
	if s := recs[a].Spec; s.ShareMilli() != 500 || recs[w].Spec.ShareMilli() != 0 {
		t.Fatalf("the records' shares: half %v, whole %v", s.GPUShare, recs[w].Spec.GPUShare)
	}
	spans := map[string]gpuSpan{}
	for _, sp := range readGPUMarks(t, record) {
		spans[sp.job] = sp
		if len(sp.devices) != 1 || sp.devices[0] != testenv.FakeGPUUUID(0) {
			t.Errorf("job %s saw CUDA_VISIBLE_DEVICES %v, want the one GPU", sp.job, sp.devices)
		}
	}
	if len(spans) != 4 {
		t.Fatalf("%d marks for 4 jobs: %+v", len(spans), spans)
	}
	sa, sb, sc, sw := spans[a], spans[b], spans[c], spans[w]
	if !sa.start.Before(sb.end) || !sb.start.Before(sa.end) {
		t.Errorf("the two halves did not run at once: %s-%s and %s-%s", clock(sa.start), clock(sa.end), clock(sb.start), clock(sb.end))
	}
	if first := minTime(sa.end, sb.end); sc.start.Before(first) {
		t.Errorf("the third half started at %s, before either of the first two ended (%s)", clock(sc.start), clock(first))
	}
	for _, h := range []gpuSpan{sa, sb, sc} {
		if sw.start.Before(h.end) {
			t.Errorf("the whole-GPU job started at %s, before half %s ended at %s", clock(sw.start), h.job, clock(h.end))
		}
	}
	testenv.Eventually(t, 5*time.Second, "the GPU free and the worker idle in the registry", func() bool {
		for _, wi := range r.workers() {
			if wi.ID == "gpu-1" {
				return wi.Busy == 0 && wi.GPUs[0].Job == ""
			}
		}
		return false
	})
}

// submitShare submits one job of a template like gpu-mark, by name.
func (r *hybridRig) submitShare(template, key, record string, seconds float64) string {
	r.t.Helper()
	rec, _ := json.Marshal(record)
	return r.submit(jobs.Submission{Template: template, IdempotencyKey: key,
		Params: map[string]json.RawMessage{"record": rec, "seconds": json.RawMessage(strconv.FormatFloat(seconds, 'f', -1, 64))}})
}

func clock(t time.Time) string { return t.Format("15:04:05.000") }

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
