package pipeline

import (
	"testing"

	"github.com/ballastdev/ballast/jobs"
)

func TestStepClass(t *testing.T) {
	pulse := jobs.Template{Command: []string{"x"}}.WithDefaults() // a burst template on its own
	core := jobs.Template{Command: []string{"x"}, Class: jobs.ClassCore}.WithDefaults()
	tests := []struct {
		name string
		step Step
		tmpl jobs.Template
		want jobs.Class
	}{
		{"plain step runs core, even with a burst template", Step{}, pulse, jobs.ClassCore},
		{"post-processing runs burst", Step{PostProcessing: true}, core, jobs.ClassBurst},
		{"override beats post-processing", Step{PostProcessing: true, Class: "core"}, pulse, jobs.ClassCore},
		{"override to burst", Step{Class: "burst"}, core, jobs.ClassBurst},
	}
	for _, tc := range tests {
		if got := StepClass(tc.step, tc.tmpl); got != tc.want {
			t.Errorf("%s: StepClass = %s, want %s", tc.name, got, tc.want)
		}
	}
}
