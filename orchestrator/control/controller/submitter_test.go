package controller_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Not parallel: testenv.Tracing swaps the global TracerProvider.
func TestSubmitSpecTracesAndStoresTraceParent(t *testing.T) {
	exp := testenv.Tracing(t)
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	sub := &controller.Submitter{Store: store}
	spec := jobs.Spec{Template: "train", Team: "ml", Command: []string{"true"}, Class: jobs.ClassCore,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second), IdempotencyKey: "trace-1"}
	ctx := context.Background()

	j, dup, err := sub.SubmitSpec(ctx, spec)
	if err != nil || dup {
		t.Fatalf("SubmitSpec: dup %v, err %v", dup, err)
	}
	first := submitSpans(exp)
	if len(first) != 1 {
		t.Fatalf("%d ballast.submit spans, want 1", len(first))
	}
	s := first[0]
	want := map[attribute.Key]attribute.Value{
		"ballast.template": attribute.StringValue("train"), "ballast.class": attribute.StringValue(string(jobs.ClassCore)),
		"ballast.team": attribute.StringValue("ml"), "ballast.queue": attribute.StringValue(j.Queue),
		"ballast.job_id": attribute.StringValue(j.ID), "ballast.duplicate": attribute.BoolValue(false),
	}
	checkAttrs(t, s, want)

	stored, err := store.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	sc := parseTraceParent(t, stored.Spec.TraceParent)
	if sc.TraceID() != s.SpanContext.TraceID() || sc.SpanID() != s.SpanContext.SpanID() {
		t.Fatalf("stored traceparent %q, want trace %s span %s", stored.Spec.TraceParent,
			s.SpanContext.TraceID(), s.SpanContext.SpanID())
	}

	// A retry of the same request, in a trace of its own, is a duplicate:
	// the job keeps the first submission's traceparent.
	exp.Reset()
	again, dup, err := sub.SubmitSpec(ctx, spec)
	if err != nil || !dup || again.ID != j.ID {
		t.Fatalf("resubmit: job %s dup %v err %v, want duplicate of %s", again.ID, dup, err, j.ID)
	}
	second := submitSpans(exp)
	if len(second) != 1 {
		t.Fatalf("%d ballast.submit spans on resubmit, want 1", len(second))
	}
	checkAttrs(t, second[0], map[attribute.Key]attribute.Value{"ballast.duplicate": attribute.BoolValue(true)})
	if again.Spec.TraceParent != stored.Spec.TraceParent {
		t.Fatalf("duplicate's traceparent %q, want the first's %q", again.Spec.TraceParent, stored.Spec.TraceParent)
	}
}

func submitSpans(exp *tracetest.InMemoryExporter) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range exp.GetSpans() {
		if s.Name == "ballast.submit" {
			out = append(out, s)
		}
	}
	return out
}

func checkAttrs(t *testing.T, s tracetest.SpanStub, want map[attribute.Key]attribute.Value) {
	t.Helper()
	got := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		got[kv.Key] = kv.Value
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %s: %s = %v, want %v", s.Name, k, got[k].String(), v.String())
		}
	}
}

func parseTraceParent(t *testing.T, tp string) trace.SpanContext {
	t.Helper()
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		t.Fatalf("traceparent %q is not a valid span context", tp)
	}
	return sc
}
