package workers

import (
	"slices"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/workers/gpu"
)

// TestDeviceEnv checks the device variables environment builds: the
// granted UUIDs on a GPU worker, nothing visible for a job granted none
// there, and none at all elsewhere, even from a spec that names them (a
// record written past config validation).
func TestDeviceEnv(t *testing.T) {
	t.Parallel()
	j := jobs.Job{ID: "j1", Attempt: 1, Spec: jobs.Spec{
		Env:     map[string]string{jobs.EnvCUDAVisibleDevices: "0,1,2,3", "KEEP": "1"},
		PassEnv: []string{jobs.EnvNvidiaVisibleDevices}}}
	two := []gpu.Device{{Index: 2, UUID: "GPU-c"}, {Index: 3, UUID: "GPU-d"}}
	for _, c := range []struct {
		name      string
		gpus      []gpu.Device
		gpuWorker bool
		want      []string // the device variables and KEEP, sorted
	}{
		{"granted two", two, true, []string{"BALLAST_GPUS=GPU-c,GPU-d", "CUDA_VISIBLE_DEVICES=GPU-c,GPU-d", "KEEP=1", "NVIDIA_VISIBLE_DEVICES=GPU-c,GPU-d"}},
		{"granted none", nil, true, []string{"BALLAST_GPUS=", "CUDA_VISIBLE_DEVICES=", "KEEP=1", "NVIDIA_VISIBLE_DEVICES=void"}},
		{"no GPU worker", nil, false, []string{"KEEP=1"}},
	} {
		var got []string
		for _, kv := range environment(j, "/ck", c.gpus, c.gpuWorker) {
			for _, p := range []string{"BALLAST_GPUS=", "CUDA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=", "KEEP="} {
				if len(kv) >= len(p) && kv[:len(p)] == p {
					got = append(got, kv)
				}
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
