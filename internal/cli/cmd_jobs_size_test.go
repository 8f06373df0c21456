package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestSizeRowsSayWhatASizedJobHoldsAndWhere(t *testing.T) {
	if rows := sizeRows(jobs.Job{State: jobs.StateQueued}); rows != nil {
		t.Errorf("a one-slot job shows size rows %v", rows)
	}
	j := jobs.Job{State: jobs.StateQueued, Spec: jobs.Spec{Size: jobs.Size{Slots: 4, Memory: 16 << 30,
		Requires: map[string]string{"gpu_model": "A100"}}}}
	render := func(rows [][]any) string {
		var b strings.Builder
		for _, r := range rows {
			fmt.Fprintf(&b, "%v=%v;", r[0], r[1])
		}
		return b.String()
	}
	if got := render(sizeRows(j)); got != "slots=4;memory=16 GiB;requires gpu_model=A100;placed on=waiting for placement;" {
		t.Errorf("queued, unplaced: %s", got)
	}
	j.Placed = []string{"gpu-1"}
	if got := render(sizeRows(j)); !strings.HasSuffix(got, "placed on=gpu-1;") {
		t.Errorf("placed: %s", got)
	}
	j.Placed, j.State = nil, jobs.StateSucceeded
	if got := render(sizeRows(j)); !strings.HasSuffix(got, "placed on=-;") {
		t.Errorf("ended: %s", got)
	}
	// A share alone is no size to place, but worth showing.
	half := jobs.Job{State: jobs.StateRunning, Spec: jobs.Spec{Size: jobs.Size{GPUShare: 0.5}}}
	if got := render(sizeRows(half)); got != "gpu_share=0.5;" {
		t.Errorf("a half-GPU job: %s", got)
	}
}
