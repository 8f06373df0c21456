package workers

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// tracerName is the controller's: one instrumentation scope for Ballast.
const tracerName = "github.com/ballastdev/ballast"

// The outcomes of an attempt, as its span's ballast.outcome. An attempt that
// failed is "failed" whether or not a retry follows: the retry is another
// attempt with a span of its own.
const (
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
	outcomeCancelled = "cancelled"
	outcomeRequeued  = "requeued"
	outcomePreempted = "preempted"
	// outcomeLost: the attempt had moved on (the controller requeued it) by
	// the time it ended, so nothing of this run was recorded.
	outcomeLost = "lost"
)

// requeueOutcome is the outcome of an attempt settled by moving the job:
// want when the move happened, else what Requeue found instead.
func requeueOutcome(moved queues.Requeued, want string) string {
	switch {
	case moved.Cancelled:
		return outcomeCancelled
	case moved.Attempt == 0:
		return outcomeLost
	}
	return want
}

// startAttemptSpan starts the "ballast.attempt" span of j's claimed attempt,
// a child of the submit span whose traceparent the spec carries. With tracing
// off (the global no-op provider) the span does not record and no attribute
// is built.
func (w *Worker) startAttemptSpan(ctx context.Context, j jobs.Job, worker string) trace.Span {
	if j.Spec.TraceParent != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": j.Spec.TraceParent})
	}
	_, span := otel.Tracer(tracerName).Start(ctx, "ballast.attempt", trace.WithSpanKind(trace.SpanKindConsumer))
	if span.IsRecording() {
		span.SetAttributes(attribute.String("ballast.job_id", j.ID), attribute.Int("ballast.attempt", j.Attempt),
			attribute.String("ballast.pool", w.opts.Pool), attribute.String("ballast.worker", worker),
			attribute.String("ballast.queue", j.Queue))
	}
	return span
}

// endAttemptSpan ends an attempt's span with how it ended; a failure is an
// error status carrying the reason recorded in the job.
func endAttemptSpan(span trace.Span, label string, res outcome) {
	if span.IsRecording() {
		span.SetAttributes(attribute.String("ballast.outcome", label))
		if label == outcomeFailed {
			span.SetStatus(codes.Error, failureReason(res))
		}
	}
	span.End()
}
