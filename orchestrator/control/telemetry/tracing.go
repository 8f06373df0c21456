package telemetry

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// InstallTracing installs a global TracerProvider exporting over OTLP/HTTP,
// and the W3C trace-context propagator, when the standard environment names
// an endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT). Otherwise it installs nothing, so spans stay
// no-ops, and returns a shutdown that does nothing: as for metrics, the
// exporter's default endpoint would make every process without a collector
// log export failures forever. The exporter reads the remaining
// OTEL_EXPORTER_OTLP_* variables; OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override serviceName and add to the resource.
//
// shutdown flushes the spans still buffered and stops the exporter; call it
// once, when the process stops.
func InstallTracing(ctx context.Context, serviceName string) (shutdown func(context.Context) error, err error) {
	noop := func(context.Context) error { return nil }
	if os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return noop, nil
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	// Only the HTTP/protobuf exporter is linked in (see otlpReader).
	if proto != "" && proto != "http/protobuf" {
		return noop, fmt.Errorf("telemetry: OTLP protocol %q is not supported, use http/protobuf", proto)
	}
	res, err := newResource(serviceName)
	if err != nil {
		return noop, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return noop, fmt.Errorf("telemetry: OTLP trace exporter: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Shutdown, nil
}
