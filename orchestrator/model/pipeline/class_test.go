package pipeline

import (
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestStepClass(t *testing.T) {
	tests := []struct {
		name string
		step Step
		want jobs.Class
	}{
		{"plain step runs core", Step{}, jobs.ClassCore},
		{"post-processing runs burst", Step{PostProcessing: true}, jobs.ClassBurst},
		{"override beats post-processing", Step{PostProcessing: true, Class: "core"}, jobs.ClassCore},
		{"override to burst", Step{Class: "burst"}, jobs.ClassBurst},
	}
	for _, tc := range tests {
		if got := StepClass(tc.step); got != tc.want {
			t.Errorf("%s: StepClass = %s, want %s", tc.name, got, tc.want)
		}
	}
}
