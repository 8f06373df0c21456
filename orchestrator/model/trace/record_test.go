package trace

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// A job from history keeps its size: a plan from history must see the
// machines its jobs need, not one slot each.
func TestJobOfKeepsTheJobsSize(t *testing.T) {
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	j := jobs.Job{State: jobs.StateSucceeded, CreatedAt: start.Add(time.Minute), StartedAt: start.Add(2 * time.Minute),
		FinishedAt: start.Add(62 * time.Minute)}
	j.Spec.Class, j.Spec.Template, j.Spec.Checkpointable = jobs.ClassBurst, "train", true
	j.Spec.Slots, j.Spec.Replicas, j.Spec.Requires = 4, 2, map[string]string{"gpu_model": "A100"}
	got, ok := JobOf(j, start)
	if !ok {
		t.Fatal("a finished job was not replayed")
	}
	if got.Slots != 4 || got.Replicas != 2 || got.TotalSlots() != 8 || got.Requires["gpu_model"] != "A100" ||
		got.Submit != time.Minute || got.Duration != time.Hour || !got.Checkpointable || got.Template != "train" {
		t.Errorf("JobOf = %+v", got)
	}
	// A share of one GPU is kept.
	j.Spec.Size = jobs.Size{GPUShare: 0.25}
	if got, _ := JobOf(j, start); got.Slots != 1 || got.Share != 250 {
		t.Errorf("a quarter GPU: %+v", got)
	}
	// A single job of the zero size is one slot, no gang.
	j.Spec.Size = jobs.Size{}
	if got, _ := JobOf(j, start); got.Slots != 1 || got.Replicas != 0 || got.Requires != nil {
		t.Errorf("zero size: %+v", got)
	}
}
