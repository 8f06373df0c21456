package controller

import (
	"context"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

// SweepView is a sweep as `ballast sweep show` and the API present it: the
// record, every trial's state and last metric, the summary with the best
// trial, and the best trial's parameters and job.
type SweepView struct {
	Sweep      flows.SweepRecord   `json:"sweep"`
	Trials     []sweep.TrialStatus `json:"trials"`
	Summary    sweep.Summary       `json:"summary"`
	BestParams map[string]any      `json:"best_params,omitempty"`
	BestJob    string              `json:"best_job,omitempty"`
}

// LoadSweepView reads a sweep and its trials' jobs.
func LoadSweepView(ctx context.Context, sweeps SweepReader, store FlowJobs, id string) (SweepView, error) {
	rec, err := sweeps.GetSweep(ctx, id)
	if err != nil {
		return SweepView{}, err
	}
	briefs, err := store.JobBriefs(ctx, trialJobs(rec))
	if err != nil {
		return SweepView{}, err
	}
	v := buildSweepView(rec, briefs)
	if b := v.Summary.Best; b != nil {
		v.BestJob = rec.Trials[b.Index]
		if specs, err := sweeps.TrialSpecs(ctx, id, b.Index, b.Index+1); err == nil && len(specs) == 1 {
			v.BestParams = specs[0].Params
		}
	}
	return v, nil
}

// buildSweepView derives each trial's state: pending until enqueued (or
// cancelled, once the sweep is), then its job's state, with a job the
// median rule cancelled shown as stopped.
func buildSweepView(rec flows.SweepRecord, briefs map[string]queues.JobBrief) SweepView {
	trials := make([]sweep.TrialStatus, rec.Total)
	for i := range trials {
		ts := sweep.TrialStatus{Index: i, State: sweep.TrialPending}
		job, enqueued := rec.Trials[i]
		switch {
		case !enqueued && rec.State == flows.SweepCancelled:
			ts.State = sweep.TrialCancelled
		case !enqueued:
		default:
			b, ok := briefs[job]
			ts.Metric = b.LastMetric
			ts.State = trialState(b.State, ok, rec.Stopped[i])
		}
		trials[i] = ts
	}
	return SweepView{Sweep: rec, Trials: trials, Summary: sweep.Summarize(rec.Spec.Goal, trials)}
}

func trialState(s jobs.State, known, stopped bool) sweep.TrialState {
	switch {
	case !known:
		return sweep.TrialFailed // the record expired: whatever it did is gone
	case s == jobs.StateQueued:
		return sweep.TrialQueued
	case s == jobs.StateRunning:
		return sweep.TrialRunning
	case s == jobs.StateSucceeded:
		return sweep.TrialSucceeded
	case s == jobs.StateCancelled && stopped:
		return sweep.TrialStopped
	case s == jobs.StateCancelled:
		return sweep.TrialCancelled
	}
	return sweep.TrialFailed
}
