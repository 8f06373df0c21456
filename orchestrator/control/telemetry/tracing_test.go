package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Not parallel: t.Setenv, and InstallTracing sets the global provider.
func TestInstallTracing(t *testing.T) {
	prev := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	shutdown, err := InstallTracing(context.Background(), "ballast-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if otel.GetTracerProvider() != prev {
		t.Fatal("a provider was installed without an endpoint")
	}

	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:1")
	if _, err := InstallTracing(context.Background(), "ballast-test"); err == nil {
		t.Fatal("grpc protocol accepted")
	}

	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")
	shutdown, err = InstallTracing(context.Background(), "ballast-test")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider); !ok {
		t.Fatalf("global provider is %T, want the SDK's", otel.GetTracerProvider())
	}
	// Nothing was recorded, so shutting down exports nothing and cannot fail
	// on the unreachable endpoint.
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
