package testenv

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Tracing installs, for the rest of the test, a global TracerProvider that
// records every span synchronously into the returned exporter, and restores
// the previous provider when the test ends.
//
// The provider is global, so a test using this must not run in parallel
// with others: it sets an environment variable only so that the testing
// package refuses t.Parallel for it (Setenv and Parallel exclude each other).
func Tracing(t testing.TB) *tracetest.InMemoryExporter {
	t.Helper()
	t.Setenv("BALLAST_TESTENV_TRACING", "1")
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() {
		otel.SetTracerProvider(prev)
		_ = tp.Shutdown(context.Background())
	})
	return exp
}
