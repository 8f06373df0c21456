package flows

import (
	"context"

	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
)

// StepJobs returns the jobs that ran step of pipelineName in its last runs
// (at most runs of them), newest run first, leaving out runs where the
// step never started or was skipped. The pipelines loop hands them to the
// job store (queues.Store.RunTimes) for the history
// pipeline.ExpectedDuration reads: the runs are kept here, the jobs'
// times there. The step's state does not filter further: a run advances
// its step states a tick after the job ends, so the job's own state
// decides. Runs past their retention are simply not there.
func (s *Store) StepJobs(ctx context.Context, pipelineName, step string, runs int) ([]string, error) {
	rs, err := s.ListRuns(ctx, pipelineName, runs)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range rs {
		if st, ok := r.Steps[step]; ok && st.JobID != "" && st.State != pipeline.StepSkipped {
			ids = append(ids, st.JobID)
		}
	}
	return ids, nil
}
