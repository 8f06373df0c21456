package pipeline

import "github.com/ballastdev/ballast/orchestrator/model/jobs"

// StepClass places a step by the pipeline's rhythm: an explicit class on the
// step wins; post-processing steps (uploads, reports, visualizations) run as
// burst, since they can wait for elastic capacity; every other step runs as
// core, because a pipeline is periodic work, the steady base that fixed quota
// is bought for. The template's own class is deliberately not consulted: it
// defaults from the template's rhythm, and inside a pipeline the rhythm is
// periodic whatever the template says.
func StepClass(step Step) jobs.Class {
	if step.Class != "" {
		return jobs.Class(step.Class)
	}
	if step.PostProcessing {
		return jobs.ClassBurst
	}
	return jobs.ClassCore
}
