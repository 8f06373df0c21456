package controller

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ballastdev/ballast/internal/spread"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Submitter is the intake's business logic: validate against the catalog,
// route, record and enqueue, then announce.
type Submitter struct {
	Catalog *jobs.Catalog
	Store   JobSubmitter
	Router  Router
	Events  events.Publisher
	Logger  *slog.Logger
	// OnQueued, when set, is called after a new job is enqueued (the
	// controller pokes its loop for core work).
	OnQueued func(jobs.Job)
	// DataLoss, when set, returns the unrecovered loss of Redis data the
	// controller saw (Controller.DataLoss): receipts then carry a warning.
	// Submissions are still accepted: the Redis that now answers keeps
	// them, and refusing would lose new work on top of the old.
	DataLoss func() *queues.DataLoss
}

// warning is the receipts' warning while a loss of Redis data stands.
func (s *Submitter) warning() string {
	if s.DataLoss == nil {
		return ""
	}
	if l := s.DataLoss(); l != nil {
		return l.Message() + "; this job is accepted, but jobs accepted before may be missing until `ballast recover` runs"
	}
	return ""
}

// Submit validates s and durably enqueues it. The error is a
// *jobs.ValidationError for bad input (nothing is written), or wraps
// jobs.ErrUnavailable / jobs.ErrIdempotencyConflict.
func (s *Submitter) Submit(ctx context.Context, sub jobs.Submission) (intake.Receipt, error) {
	spec, err := s.Catalog.Resolve(sub)
	if err != nil {
		return intake.Receipt{}, err
	}
	j, dup, err := s.SubmitSpec(ctx, spec)
	if err != nil {
		return intake.Receipt{}, err
	}
	return intake.Receipt{JobID: j.ID, Attempt: j.Attempt, State: j.State, Queue: j.Queue, Duplicate: dup, Warning: s.warning()}, nil
}

// tracerName names Ballast's tracer. The tracer comes from the global
// provider on every call: a no-op unless the process installed one
// (telemetry.InstallTracing), and a test may swap it.
const tracerName = "github.com/ballastdev/ballast"

// SubmitSpec routes, records and enqueues an already resolved spec, then
// announces it. Pipeline steps and sweep trials come in here: they are
// resolved against the catalog by their own validation.
//
// The submission is traced as "ballast.submit", continuing any span in ctx.
// Its traceparent is stored in the spec (unless the spec already carries
// one), so that every attempt of the job joins this trace; a duplicate keeps
// the first submission's.
func (s *Submitter) SubmitSpec(ctx context.Context, spec jobs.Spec) (jobs.Job, bool, error) {
	q := s.Router.Route(spec)
	ctx, span := otel.Tracer(tracerName).Start(ctx, "ballast.submit", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("ballast.template", spec.Template), attribute.String("ballast.class", string(spec.Class)),
			attribute.String("ballast.team", spec.Team), attribute.String("ballast.queue", string(q))))
	defer span.End()
	if spec.TraceParent == "" && span.SpanContext().IsValid() {
		carrier := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, carrier)
		spec.TraceParent = carrier.Get("traceparent")
	}
	res, err := s.Store.Submit(ctx, spec, q)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return jobs.Job{}, false, err
	}
	span.SetAttributes(attribute.String("ballast.job_id", res.Job.ID), attribute.Bool("ballast.duplicate", res.Duplicate))
	s.announce(res.Job, spec, res.Duplicate)
	return res.Job, res.Duplicate, nil
}

// announce publishes job.queued for j, submitted as spec, and pokes
// OnQueued for a new job. A duplicate within the stream's duplicate window
// is most likely the client retrying a submit whose reply was lost, and the
// first try's announcement may be lost with it: it is announced again under
// the same ID, which the stream stores once. An older duplicate is a
// resubmission of a job announced long ago.
func (s *Submitter) announce(j jobs.Job, spec jobs.Spec, dup bool) {
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	s.announceIn(ctx, &j, &spec, dup)
}

// announceIn is announce with the publish bounded by ctx. It takes the job
// and spec by reference: a batch announces thousands, and each is large.
func (s *Submitter) announceIn(ctx context.Context, j *jobs.Job, spec *jobs.Spec, dup bool) {
	if !dup || time.Since(j.CreatedAt) < eventbus.DuplicateWindow {
		publishIn(ctx, s.Events, s.Logger, events.Event{ID: events.JobEventID(j.ID, 1, events.TypeJobQueued), Type: events.TypeJobQueued, JobID: j.ID, Attempt: 1,
			State: jobs.StateQueued, Queue: j.Queue, Time: j.CreatedAt,
			Data: queuedData(spec)})
	}
	if !dup && s.OnQueued != nil {
		s.OnQueued(*j)
	}
}

// SubmitBatch validates every submission first and writes nothing unless
// all are valid (the error is then one *jobs.ValidationError naming each
// problem by index); then records them in pipelines of a few hundred,
// announcing each chunk while Redis records the next. Each job is recorded
// atomically on its own, with its idempotency key: the results say, per
// submission, what became of it.
func (s *Submitter) SubmitBatch(ctx context.Context, subs []jobs.Submission) ([]intake.BatchResult, error) {
	items := make([]queues.BatchItem, len(subs))
	errs := make([]error, len(subs))
	// Each submission resolves on its own: spread them over the cores.
	spread.Each(len(subs), func(i int) {
		spec, err := s.Catalog.Resolve(subs[i])
		if err != nil {
			errs[i] = err
			return
		}
		items[i] = queues.BatchItem{Spec: spec, Queue: s.Router.Route(spec)}
	})
	var problems []*jobs.FieldError
	for i, err := range errs {
		if err != nil {
			problems = append(problems, jobs.Indexed(i, err)...)
		}
	}
	if len(problems) > 0 {
		return nil, &jobs.ValidationError{Problems: problems}
	}
	ctx, span := otel.Tracer(tracerName).Start(ctx, "ballast.submit_batch", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.Int("ballast.batch_size", len(subs))))
	defer span.End()
	out := make([]intake.BatchResult, len(subs))
	warning := s.warning()
	// Each chunk is announced while Redis records the next.
	err := s.Store.SubmitBatchEach(ctx, items, func(lo int, res []queues.BatchResult) {
		pctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		defer cancel()
		for k := range res {
			i, r := lo+k, &res[k] // a result is large: not copied
			if r.Err != nil {
				e := intake.WireError(r.Err, "job", s.Logger)
				out[i].Error = &e
				continue
			}
			j := &r.Job
			out[i].Receipt = &intake.Receipt{JobID: j.ID, Attempt: j.Attempt, State: j.State, Queue: j.Queue, Duplicate: r.Duplicate, Warning: warning}
			s.announceIn(pctx, j, &items[i].Spec, r.Duplicate)
		}
	})
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return nil, err
	}
	return out, nil
}
