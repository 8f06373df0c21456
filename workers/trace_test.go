package workers_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Not parallel: testenv.Tracing swaps the global TracerProvider.
func TestAttemptSpanJoinsTheSubmitTrace(t *testing.T) {
	exp := testenv.Tracing(t)
	e := newEnv(t)
	// The submit side, as the controller's Submitter does it: the spec
	// carries the traceparent of a span of the submitter's.
	ctx, parent := otel.Tracer("test").Start(context.Background(), "test.submit")
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	parent.End()
	spec := e.shell("true")
	spec.TraceParent = carrier.Get("traceparent")
	j := e.submit(spec, queues.QueueCore)
	e.start(e.options())
	if got := e.waitTerminal(j.ID, wait); got.State != jobs.StateSucceeded {
		t.Fatalf("job ended %s (%s), want succeeded", got.State, got.LastError)
	}
	// The span ends after the result is recorded: wait for it too.
	var span tracetest.SpanStub
	testenv.Eventually(t, wait, "the attempt's span to end", func() bool {
		for _, s := range exp.GetSpans() {
			if s.Name == "ballast.attempt" {
				span = s
				return true
			}
		}
		return false
	})
	psc := parent.SpanContext()
	if span.Parent.TraceID() != psc.TraceID() || span.SpanContext.TraceID() != psc.TraceID() {
		t.Errorf("attempt span in trace %s (parent's %s), want the submit's %s",
			span.SpanContext.TraceID(), span.Parent.TraceID(), psc.TraceID())
	}
	if span.Parent.SpanID() != psc.SpanID() {
		t.Errorf("attempt span's parent %s, want the submit span %s", span.Parent.SpanID(), psc.SpanID())
	}
	got := map[string]string{}
	for _, kv := range span.Attributes {
		got[string(kv.Key)] = kv.Value.String()
	}
	want := map[string]string{"ballast.outcome": "succeeded", "ballast.job_id": j.ID, "ballast.attempt": "1",
		"ballast.pool": "fixed", "ballast.queue": string(queues.QueueCore)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if got["ballast.worker"] == "" {
		t.Error("ballast.worker is not set")
	}
	if span.Status.Code == codes.Error {
		t.Errorf("a succeeded attempt has an error status: %q", span.Status.Description)
	}
}

// A failed attempt is an error span with the job's failure reason.
func TestFailedAttemptSpanIsAnError(t *testing.T) {
	exp := testenv.Tracing(t)
	e := newEnv(t)
	j := e.submit(e.shell("exit 3"), queues.QueueCore)
	e.start(e.options())
	if got := e.waitTerminal(j.ID, wait); got.State != jobs.StateFailed {
		t.Fatalf("job ended %s, want failed", got.State)
	}
	testenv.Eventually(t, wait, "a failed attempt span", func() bool {
		for _, s := range exp.GetSpans() {
			if s.Name != "ballast.attempt" {
				continue
			}
			for _, kv := range s.Attributes {
				if kv.Key == "ballast.outcome" && kv.Value.AsString() == "failed" {
					return s.Status.Code == codes.Error && s.Status.Description == "exited with code 3"
				}
			}
		}
		return false
	})
}
