package queues_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/ballastdev/ballast/queues"
)

// TestRegistryKeepsLabelsAndGPUs: what a GPU worker reports of its devices
// and labels comes back from the registry as it was sent.
func TestRegistryKeepsLabelsAndGPUs(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	w := queues.WorkerInfo{ID: "gpu-1", Pool: "fixed", Slots: 2, Busy: 1,
		Labels: map[string]string{queues.LabelGPUModel: "NVIDIA A100-SXM4-80GB"},
		GPUs: []queues.GPUInfo{
			{Index: 0, UUID: "GPU-aa", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920, Job: "job-1"},
			{Index: 1, UUID: "GPU-bb", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920},
		}}
	if _, err := s.Register(ctx, w); err != nil {
		t.Fatal(err)
	}
	ws, err := s.Workers(ctx)
	if err != nil || len(ws) != 1 {
		t.Fatalf("Workers = %+v, %v", ws, err)
	}
	if !reflect.DeepEqual(ws[0].Labels, w.Labels) || !reflect.DeepEqual(ws[0].GPUs, w.GPUs) {
		t.Errorf("registry gave labels %v and GPUs %+v, want %v and %+v", ws[0].Labels, ws[0].GPUs, w.Labels, w.GPUs)
	}
}
