package telemetry

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// otlpReader returns a periodic OTLP/HTTP reader when the standard
// environment names an endpoint, and nil otherwise. Only the presence of an
// endpoint decides: the exporter's default (localhost:4318) would otherwise
// make every controller without a collector log export failures forever.
// The exporter itself reads the remaining OTEL_EXPORTER_OTLP_* variables
// (headers, TLS, timeout, compression) and the reader reads
// OTEL_METRIC_EXPORT_INTERVAL / OTEL_METRIC_EXPORT_TIMEOUT.
func otlpReader() (sdkmetric.Reader, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return nil, nil
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	// Only the HTTP/protobuf exporter is linked in. Failing loudly beats
	// posting HTTP to a gRPC port (4317) and losing every export.
	if proto != "" && proto != "http/protobuf" {
		return nil, fmt.Errorf("telemetry: OTLP protocol %q is not supported, use http/protobuf", proto)
	}
	exp, err := otlpmetrichttp.New(context.Background())
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	return sdkmetric.NewPeriodicReader(exp), nil
}
