package queues

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
)

// StepDurations returns how long step of pipelineName ran in those of its
// last runs (at most runs of them, newest first) where it succeeded: the
// history pipeline.ExpectedDuration reads to decide how early a step with a
// deadline must start. A duration is the last attempt's start to finish, the
// run time that finished the work; a job that resumed from a checkpoint
// counts only its last stretch. Runs and jobs past their retention are
// simply not there.
func (s *Store) StepDurations(ctx context.Context, pipelineName, step string, runs int) ([]time.Duration, error) {
	rs, err := s.ListRuns(ctx, pipelineName, runs)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range rs {
		// The job's own state decides, not the step's: a run advances its
		// step states a tick after the job ends.
		if st, ok := r.Steps[step]; ok && st.JobID != "" && st.State != pipeline.StepSkipped {
			ids = append(ids, st.JobID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	js, err := s.getMany(ctx, ids, func(j jobs.Job) bool {
		return j.State == jobs.StateSucceeded && !j.StartedAt.IsZero() && j.FinishedAt.After(j.StartedAt)
	}, len(ids))
	if err != nil {
		return nil, wrap("queues.StepDurations", err)
	}
	out := make([]time.Duration, 0, len(js))
	for _, j := range js {
		out = append(out, j.FinishedAt.Sub(j.StartedAt))
	}
	return out, nil
}
