package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// otlpEnv points the standard variables at url and clears the ones that
// would change what the test sees. t.Setenv also keeps these tests serial.
func otlpEnv(t *testing.T, url string) {
	t.Helper()
	for k, v := range map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":         url,
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "",
		"OTEL_EXPORTER_OTLP_PROTOCOL":         "",
		"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "",
		"OTEL_EXPORTER_OTLP_COMPRESSION":      "",
		"OTEL_SERVICE_NAME":                   "",
		"OTEL_RESOURCE_ATTRIBUTES":            "",
		// Long enough that only the flush on Shutdown exports.
		"OTEL_METRIC_EXPORT_INTERVAL": "3600000",
	} {
		t.Setenv(k, v)
	}
}

func TestOTLPPushWhenEndpointSet(t *testing.T) {
	var (
		mu   sync.Mutex
		reqs []*colmetricpb.ExportMetricsServiceRequest
		path string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req := new(colmetricpb.ExportMetricsServiceRequest)
		if err := proto.Unmarshal(body, req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		reqs = append(reqs, req)
		path = r.URL.Path
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer srv.Close()
	otlpEnv(t, srv.URL)

	m, err := New(Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	m.JobFinished(ClassBurst, OutcomeFailed)
	m.JobFinished(ClassBurst, OutcomeFailed)
	m.SetSnapshot(Snapshot{At: time.Unix(10, 0), Queues: []QueueDepth{{Queue: "q", Pending: 6}}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(reqs) == 0 {
		t.Fatal("no OTLP export reached the endpoint")
	}
	if path != "/v1/metrics" {
		t.Errorf("export posted to %q, want /v1/metrics", path)
	}
	var finished int64 = -1
	var depth int64 = -1
	service := ""
	for _, req := range reqs {
		for _, rm := range req.GetResourceMetrics() {
			for _, kv := range rm.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, sm := range rm.GetScopeMetrics() {
				for _, mt := range sm.GetMetrics() {
					switch mt.GetName() {
					case "ballast.jobs.finished":
						for _, dp := range mt.GetSum().GetDataPoints() {
							finished = dp.GetAsInt()
						}
					case "ballast.queue.depth":
						for _, dp := range mt.GetGauge().GetDataPoints() {
							depth = dp.GetAsInt()
						}
					}
				}
			}
		}
	}
	if finished != 2 {
		t.Errorf("ballast.jobs.finished over OTLP = %d, want 2", finished)
	}
	if depth != 6 {
		t.Errorf("ballast.queue.depth over OTLP = %d, want 6", depth)
	}
	if service != DefaultServiceName {
		t.Errorf("service.name = %q, want %q", service, DefaultServiceName)
	}
}

func TestOTLPOffWithoutEndpoint(t *testing.T) {
	otlpEnv(t, "")
	r, err := otlpReader()
	if err != nil || r != nil {
		t.Fatalf("otlpReader() = %v, %v; want no reader without an endpoint", r, err)
	}
}

func TestOTLPRejectsUnsupportedProtocol(t *testing.T) {
	otlpEnv(t, "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	if m, err := New(Options{}); err == nil {
		_ = m.Shutdown(context.Background())
		t.Fatal("New accepted OTLP protocol grpc, which is not linked in")
	}
	// The metrics-specific variable wins over the general one.
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")
	m, err := New(Options{})
	if err != nil {
		t.Fatalf("New with metrics protocol http/protobuf: %v", err)
	}
	_ = m.Shutdown(context.Background())

	// DisableOTLP ignores the environment altogether.
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc")
	m, err = New(Options{DisableOTLP: true})
	if err != nil {
		t.Fatalf("New with DisableOTLP: %v", err)
	}
	_ = m.Shutdown(context.Background())
}
