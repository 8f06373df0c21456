package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues/flows"
)

// SpecSubmitter records and enqueues a resolved job spec; Submitter is the
// production one. The bool reports an idempotency-key duplicate.
type SpecSubmitter interface {
	SubmitSpec(ctx context.Context, spec jobs.Spec) (jobs.Job, bool, error)
}

// PipelinesOptions configures the pipeline runner.
type PipelinesOptions struct {
	// Runs keeps the runs; Jobs reaches their steps' jobs.
	Runs      RunBook
	Jobs      StepJobs
	Submitter SpecSubmitter
	Catalog   *jobs.Catalog
	// Pipelines are the configured pipelines by name.
	Pipelines map[string]pipeline.Pipeline
	// Grace is how late a scheduled time may be noticed and still be on
	// time (default pipeline.FireGrace); later, it was missed and the
	// catch-up policy decides.
	Grace  time.Duration
	Events events.Publisher
	Logger *slog.Logger
	// OverflowLead is how long on-demand capacity takes from an overflow
	// to the job's start (the slowest on-demand pool's start-up delay and a
	// tick or two): a core step of a run with a deadline overflows that
	// much before its latest start, so that it starts in time.
	OverflowLead time.Duration
	// RecordOnly makes Trigger record the run and leave its steps to the
	// leader's next tick. The CLI uses it: the leader's router, not the
	// CLI's guess of it, must place the steps.
	RecordOnly bool
}

// Pipelines fires configured pipelines on their schedules and moves their
// runs through their DAGs. The leader calls Tick; the run records in Redis
// carry everything, so a new leader continues where the last one stopped.
type Pipelines struct {
	opts   PipelinesOptions
	scheds map[string]pipeline.Schedule
	names  []string
	log    *slog.Logger
}

// NewPipelines validates every pipeline against the catalog and parses its
// schedule; a pipeline that would fail at 02:30 fails here instead.
func NewPipelines(o PipelinesOptions) (*Pipelines, error) {
	if o.Runs == nil || o.Jobs == nil || o.Submitter == nil || o.Catalog == nil {
		return nil, errors.New("controller.NewPipelines: Runs, Jobs, Submitter and Catalog are required")
	}
	if o.Grace <= 0 {
		o.Grace = pipeline.FireGrace
	}
	if o.Events == nil {
		o.Events = events.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	defs := o.Pipelines
	o.Pipelines = make(map[string]pipeline.Pipeline, len(defs)) // the caller's map stays theirs
	p := &Pipelines{opts: o, scheds: map[string]pipeline.Schedule{}, log: o.Logger}
	var errs []error
	for name, def := range defs {
		if err := pipeline.Validate(name, def, o.Catalog); err != nil {
			errs = append(errs, err)
			continue
		}
		s, err := pipeline.Parse(def.Schedule, def.TimeZone)
		if err != nil {
			errs = append(errs, fmt.Errorf("pipelines.%s.schedule: %w", name, err))
			continue
		}
		o.Pipelines[name] = def.WithDefaults()
		p.scheds[name] = s
		p.names = append(p.names, name)
	}
	sort.Strings(p.names)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("controller.NewPipelines: %w", err)
	}
	return p, nil
}

// Names returns the configured pipelines' names, sorted.
func (p *Pipelines) Names() []string { return append([]string(nil), p.names...) }

// Definition returns a configured pipeline.
func (p *Pipelines) Definition(name string) (pipeline.Pipeline, bool) {
	d, ok := p.opts.Pipelines[name]
	return d, ok
}

// NextFire returns the earliest scheduled time after now of any configured
// pipeline; zero when none will ever fire.
func (p *Pipelines) NextFire(now time.Time) time.Time {
	var next time.Time
	for _, name := range p.names {
		if t := p.scheds[name].Next(now); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// Tick fires the pipelines whose time has come at now, then advances every
// active run: it follows the jobs of running steps, starts the steps whose
// dependencies succeeded, skips the dependants of failed ones, ends runs
// whose steps are all done, and flags runs past their deadline. now is the
// controller's clock, injected so tests can drive schedules.
func (p *Pipelines) Tick(ctx context.Context, now time.Time) error {
	var errs []error
	// Runs advance first: a run whose steps ended while no leader looked
	// must end before the overlap policy judges the next scheduled time.
	active, err := p.opts.Runs.ActiveRuns(ctx)
	if err != nil {
		return err
	}
	byPipeline := map[string][]flows.Run{}
	for _, r := range active {
		live, err := p.advance(ctx, r, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("run %s of %s: %w", r.ID, r.Pipeline, err))
		}
		if live { // the overlap policy weighs only runs still going
			byPipeline[r.Pipeline] = append(byPipeline[r.Pipeline], r)
		}
	}
	for _, name := range p.names {
		// A new run's first steps are started by fire itself.
		if err := p.fire(ctx, name, now, byPipeline[name]); err != nil {
			errs = append(errs, fmt.Errorf("pipeline %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// fire handles pipeline name's schedule at now; active are its runs still
// going.
func (p *Pipelines) fire(ctx context.Context, name string, now time.Time, active []flows.Run) error {
	def := p.opts.Pipelines[name]
	handled, err := p.opts.Runs.HandledUntil(ctx, name)
	if err != nil {
		return err
	}
	f := pipeline.Decide(p.scheds[name], handled, now, def.CatchUp, p.opts.Grace)
	if f.Time.IsZero() {
		return nil
	}
	if !f.Fire {
		moved, err := p.opts.Runs.MarkHandled(ctx, name, f.Time)
		if err == nil && moved {
			p.log.Warn("pipeline time missed while no controller ran; catch_up is skip, so it will not run",
				"pipeline", name, "scheduled", f.Time, "late", now.Sub(f.Time).Round(time.Second))
			p.publish(events.Event{ID: pipeline.DedupeKey(name, f.Time) + ".missed", Type: events.TypePipelineMissed,
				Pipeline: name, Time: now, Reason: "no controller was running at the scheduled time (catch_up: skip)",
				Data: events.PipelineRun{Scheduled: f.Time}.Data()})
		}
		return err
	}
	nr := flows.NewRun{Pipeline: name, Definition: def, Scheduled: f.Time, Trigger: flows.TriggerSchedule,
		State: pipeline.RunRunning, DedupeKey: pipeline.DedupeKey(name, f.Time), AdvanceCursor: true}
	if f.Late {
		nr.Trigger = flows.TriggerCatchUp
	}
	switch pipeline.OnOverlap(def.Overlap, len(active) > 0) {
	case pipeline.Skip:
		nr.State = pipeline.RunSkipped
		nr.Reason = fmt.Sprintf("run %s (scheduled %s) was still active; overlap is forbid", active[0].ID, active[0].Scheduled.Format(time.RFC3339))
	case pipeline.ReplacePrevious:
		for _, r := range active {
			if err := p.CancelRun(ctx, r.ID, fmt.Sprintf("replaced by the run scheduled at %s (overlap: replace)", f.Time.Format(time.RFC3339))); err != nil {
				return err
			}
		}
	}
	if dl, err := pipeline.DeadlineFor(def, f.Time); err == nil {
		nr.Deadline = dl
	}
	_, _, err = p.start(ctx, nr, now)
	return err
}

// Trigger starts a run of pipeline name now, outside its schedule. The
// overlap policy applies as for a scheduled run, except that forbid refuses
// with an error naming the active run instead of recording a skip.
func (p *Pipelines) Trigger(ctx context.Context, name string, now time.Time) (flows.Run, error) {
	def, ok := p.opts.Pipelines[name]
	if !ok {
		return flows.Run{}, &jobs.ValidationError{Problems: []*jobs.FieldError{{Field: "pipeline",
			Message: fmt.Sprintf("unknown pipeline %q (configured: %v)", name, p.names), Err: jobs.ErrNotFound}}}
	}
	active, err := p.activeOf(ctx, name)
	if err != nil {
		return flows.Run{}, err
	}
	switch pipeline.OnOverlap(def.Overlap, len(active) > 0) {
	case pipeline.Skip:
		return flows.Run{}, &jobs.ValidationError{Problems: []*jobs.FieldError{{Field: "pipeline",
			Message: fmt.Sprintf("run %s of %s is still active and overlap is forbid: wait for it or cancel it (ballast pipelines cancel %s)", active[0].ID, name, active[0].ID)}}}
	case pipeline.ReplacePrevious:
		for _, r := range active {
			if err := p.CancelRun(ctx, r.ID, "replaced by a manual trigger (overlap: replace)"); err != nil {
				return flows.Run{}, err
			}
		}
	}
	nr := flows.NewRun{Pipeline: name, Definition: def, Scheduled: now, Trigger: flows.TriggerManual, State: pipeline.RunRunning}
	if dl, err := pipeline.DeadlineFor(def, now); err == nil {
		nr.Deadline = dl
	}
	run, _, err := p.start(ctx, nr, now)
	return run, err
}

func (p *Pipelines) activeOf(ctx context.Context, name string) ([]flows.Run, error) {
	all, err := p.opts.Runs.ActiveRuns(ctx)
	if err != nil {
		return nil, err
	}
	var out []flows.Run
	for _, r := range all {
		if r.Pipeline == name {
			out = append(out, r)
		}
	}
	return out, nil
}

// start records a run and, if it runs, starts its first steps. A run that
// another controller created first is left to it (created is false).
func (p *Pipelines) start(ctx context.Context, nr flows.NewRun, now time.Time) (flows.Run, bool, error) {
	run, created, err := p.opts.Runs.CreateRun(ctx, nr)
	if err != nil || !created {
		return run, false, err
	}
	typ := events.TypePipelineRunStarted
	if run.State == pipeline.RunSkipped {
		typ = events.TypePipelineRunSkipped
		p.log.Warn("pipeline run skipped", "pipeline", run.Pipeline, "scheduled", run.Scheduled, "reason", run.Reason)
	} else {
		p.log.Info("pipeline run started", "pipeline", run.Pipeline, "run", run.ID, "scheduled", run.Scheduled, "trigger", run.Trigger)
	}
	p.publish(events.Event{ID: run.ID + "." + string(typ), Type: typ, Pipeline: run.Pipeline, RunID: run.ID,
		Reason: run.Reason, Time: now, Data: events.PipelineRun{Scheduled: run.Scheduled, Trigger: string(run.Trigger)}.Data()})
	if run.State == pipeline.RunRunning && !p.opts.RecordOnly {
		_, err = p.advance(ctx, run, now)
	}
	return run, true, err
}

// advance moves one active run forward. Every write is conditional on the
// run still running, so two leaders for a moment, or a cancel racing a
// tick, cannot resurrect or double anything; steps are submitted with a
// per-run, per-step idempotency key, so a step is one job however often
// this runs.
func (p *Pipelines) advance(ctx context.Context, run flows.Run, now time.Time) (live bool, err error) {
	states := run.StepStates()
	changed := map[string]pipeline.StepState{}
	var reasons []string

	// Follow the jobs of running steps.
	var ids []string
	for _, st := range run.Steps {
		if st.State == pipeline.StepRunning && st.JobID != "" {
			ids = append(ids, st.JobID)
		}
	}
	briefs, err := p.opts.Jobs.JobBriefs(ctx, ids)
	if err != nil {
		return true, err
	}
	for name, st := range run.Steps {
		if st.State != pipeline.StepRunning {
			continue
		}
		b, ok := briefs[st.JobID]
		var next pipeline.StepState
		switch {
		case !ok:
			next = pipeline.StepFailed
			reasons = append(reasons, fmt.Sprintf("step %s: job %s vanished (its record expired)", name, st.JobID))
		case b.State == jobs.StateSucceeded:
			next = pipeline.StepSucceeded
		case b.State == jobs.StateFailed:
			next = pipeline.StepFailed
			reasons = append(reasons, fmt.Sprintf("step %s failed (job %s)", name, st.JobID))
		case b.State == jobs.StateCancelled:
			next = pipeline.StepCancelled
			reasons = append(reasons, fmt.Sprintf("step %s was cancelled (job %s)", name, st.JobID))
		default:
			continue
		}
		states[name], changed[name] = next, next
	}

	// Start what is ready, skip what cannot run; repeat while a step fails
	// at submission, since that can doom further steps at once.
	for {
		start, skip := pipeline.Ready(run.Definition, states)
		for _, name := range skip {
			states[name], changed[name] = pipeline.StepSkipped, pipeline.StepSkipped
		}
		if len(start) == 0 {
			break
		}
		if ok, err := p.opts.Runs.SetStepStates(ctx, run.ID, changed); err != nil || !ok {
			return err != nil, err // !ok: the run ended under us; nothing to do
		}
		changed = map[string]pipeline.StepState{}
		for _, name := range start {
			next, why, err := p.startStep(ctx, run, name)
			if err != nil {
				return true, err
			}
			states[name] = next
			if next != pipeline.StepRunning {
				changed[name] = next
				reasons = append(reasons, why)
			}
		}
	}
	if ok, err := p.opts.Runs.SetStepStates(ctx, run.ID, changed); err != nil || !ok {
		return err != nil, err
	}

	outcome := pipeline.RunState(states)
	if outcome == pipeline.RunRunning {
		if !run.Deadline.IsZero() && now.After(run.Deadline) {
			p.deadlineMissed(ctx, run, now, "still running")
		}
		return true, nil
	}
	reason := ""
	if outcome == pipeline.RunFailed {
		reason = failureReason(run, states, reasons)
	}
	ended, _, err := p.opts.Runs.EndRun(ctx, run.ID, outcome, reason)
	if err != nil || !ended {
		return err != nil, err
	}
	typ := events.TypePipelineRunSucceeded
	if outcome == pipeline.RunFailed {
		typ = events.TypePipelineRunFailed
	}
	p.log.Info("pipeline run ended", "pipeline", run.Pipeline, "run", run.ID, "state", outcome, "reason", reason)
	p.publish(events.Event{ID: run.ID + "." + string(typ), Type: typ, Pipeline: run.Pipeline, RunID: run.ID,
		Reason: reason, Time: now, Data: events.PipelineRun{Scheduled: run.Scheduled}.Data()})
	if !run.Deadline.IsZero() && now.After(run.Deadline) {
		p.deadlineMissed(ctx, run, now, "finished late")
	}
	return false, nil
}

// startStep submits step name of run and records its job. A step the
// catalog refuses (its template was removed or changed since the run was
// defined) fails; Redis trouble is returned and the next tick tries again
// with the same idempotency key.
func (p *Pipelines) startStep(ctx context.Context, run flows.Run, name string) (pipeline.StepState, string, error) {
	spec, err := pipeline.StepSpec(p.opts.Catalog, run.Pipeline, run.ID, name, run.Definition.Steps[name])
	if err != nil {
		p.log.Error("pipeline step cannot be submitted", "pipeline", run.Pipeline, "run", run.ID, "step", name, "err", err)
		return pipeline.StepFailed, fmt.Sprintf("step %s cannot be submitted: %v", name, err), nil
	}
	if !run.Deadline.IsZero() && spec.Class == jobs.ClassCore {
		// A core step of a run with a deadline may wait for fixed quota
		// only until it must start to finish in time; past that, rule 7
		// overflows it (when capacity.core_overflow is on).
		past, err := p.opts.Runs.StepJobs(ctx, run.Pipeline, name, stepHistoryRuns)
		if err != nil {
			return "", "", err
		}
		hist, err := p.opts.Jobs.RunTimes(ctx, past)
		if err != nil {
			return "", "", err
		}
		spec.StartBy = pipeline.LatestStart(run.Deadline, hist, spec.Timeout.Std()).Add(-p.opts.OverflowLead)
	}
	j, _, err := p.opts.Submitter.SubmitSpec(ctx, spec)
	var ve *jobs.ValidationError
	switch {
	case errors.As(err, &ve) || errors.Is(err, jobs.ErrIdempotencyConflict):
		return pipeline.StepFailed, fmt.Sprintf("step %s refused: %v", name, err), nil
	case err != nil:
		return "", "", err
	}
	if _, err := p.opts.Runs.StartStep(ctx, run.ID, name, j.ID); err != nil {
		return "", "", err
	}
	return pipeline.StepRunning, "", nil
}

// stepHistoryRuns is how many of a pipeline's last runs a step's expected
// duration is taken from: enough for a p90 that one slow night does not set
// alone, few enough to follow a step that grows with its data.
const stepHistoryRuns = 20

// failureReason names the first step, in DAG order, that failed: the run's
// reason to fail. Submission refusals found at this tick carry more detail.
func failureReason(run flows.Run, states map[string]pipeline.StepState, found []string) string {
	if len(found) > 0 {
		return found[0]
	}
	order, _ := pipeline.Order(run.Definition)
	for _, name := range order {
		switch states[name] {
		case pipeline.StepFailed:
			return fmt.Sprintf("step %s failed (job %s)", name, run.Steps[name].JobID)
		case pipeline.StepCancelled:
			return fmt.Sprintf("step %s was cancelled (job %s)", name, run.Steps[name].JobID)
		}
	}
	return "a step failed"
}

func (p *Pipelines) deadlineMissed(ctx context.Context, run flows.Run, now time.Time, how string) {
	first, err := p.opts.Runs.MarkDeadlineMissed(ctx, run.ID)
	if err != nil || !first {
		return
	}
	p.log.Warn("pipeline run missed its deadline", "pipeline", run.Pipeline, "run", run.ID, "deadline", run.Deadline, "state", how)
	p.publish(events.Event{ID: run.ID + "." + string(events.TypePipelineDeadlineMissed), Type: events.TypePipelineDeadlineMissed,
		Pipeline: run.Pipeline, RunID: run.ID, Time: now, Reason: how,
		Data: events.PipelineDeadline{Deadline: run.Deadline, Scheduled: run.Scheduled, Late: now.Sub(run.Deadline)}.Data()})
}

// CancelRun ends a running run as cancelled and cancels the jobs of its
// running steps; pending steps are skipped. Cancelling an ended run changes
// nothing.
func (p *Pipelines) CancelRun(ctx context.Context, runID, reason string) error {
	return CancelRun(ctx, p.opts.Runs, p.opts.Jobs, p.opts.Events, runID, reason)
}

// CancelRun is Pipelines.CancelRun for callers without a runner (the CLI):
// it needs only the stores.
func CancelRun(ctx context.Context, runs RunCanceller, store FlowJobs, pub events.Publisher, runID, reason string) error {
	run, err := runs.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	ended, orphans, err := runs.EndRun(ctx, runID, pipeline.RunCancelled, reason)
	if err != nil || !ended {
		return err
	}
	var errs []error
	for _, id := range orphans {
		if _, err := store.Cancel(ctx, id); err != nil && !errors.Is(err, jobs.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	publish(pub, nil, events.Event{ID: runID + "." + string(events.TypePipelineRunCancelled), Type: events.TypePipelineRunCancelled,
		Pipeline: run.Pipeline, RunID: runID, Reason: reason, Time: time.Now()})
	return errors.Join(errs...)
}

func (p *Pipelines) publish(e events.Event) { publish(p.opts.Events, p.log, e) }
