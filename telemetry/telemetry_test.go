package telemetry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/adaptrag/adaptrag/telemetry"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestPlanFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want telemetry.Plan
		err  bool
	}{
		{"nothing set", nil, telemetry.Plan{}, false},
		{"endpoint: http by default", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://j:4318"}, telemetry.Plan{Traces: "http/protobuf"}, false},
		{"traces endpoint only", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://j:4318/v1/traces"}, telemetry.Plan{Traces: "http/protobuf"}, false},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://j:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, telemetry.Plan{Traces: "grpc"}, false},
		{"traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://j:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, telemetry.Plan{Traces: "grpc"}, false},
		{"traces off", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://j:4318", "OTEL_TRACES_EXPORTER": "none"}, telemetry.Plan{}, false},
		{"metrics need asking for", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "otlp"},
			telemetry.Plan{Traces: "http/protobuf", Metrics: "http/protobuf"}, false},
		{"metrics endpoint and protocol", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc"},
			telemetry.Plan{Metrics: "grpc"}, false},
		{"metrics off", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none"}, telemetry.Plan{}, false},
		{"http/json unsupported", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://j:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, telemetry.Plan{}, true},
		{"unset signal ignores a bad protocol", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"}, telemetry.Plan{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := telemetry.PlanFromEnv(env(tt.env))
			if (err != nil) != tt.err || (err != nil && !errors.Is(err, telemetry.ErrConfig)) {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if got != tt.want {
				t.Fatalf("plan = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestResource(t *testing.T) {
	attrs := func(e map[string]string, c telemetry.Config) map[attribute.Key]string {
		c.Getenv = env(e)
		res, err := telemetry.Resource(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		m := map[attribute.Key]string{}
		for _, kv := range res.Attributes() {
			m[kv.Key] = kv.Value.String()
		}
		return m
	}
	a := attrs(nil, telemetry.Config{ServiceName: "adaptrag"})
	if a["service.name"] != "adaptrag" || a["service.version"] == "" || a["telemetry.sdk.language"] != "go" {
		t.Errorf("default resource %v", a)
	}
	a = attrs(map[string]string{"OTEL_SERVICE_NAME": "kb-prod", "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=staging, team=search"},
		telemetry.Config{ServiceName: "adaptrag", ServiceVersion: "v1.2.3"})
	if a["service.name"] != "kb-prod" || a["service.version"] != "v1.2.3" || a["deployment.environment.name"] != "staging" || a["team"] != "search" {
		t.Errorf("resource from env %v", a)
	}
	if v := telemetry.ModuleVersion(); v == "" {
		t.Error("empty module version")
	}
}

func TestStartWithoutEndpointRecordsOnly(t *testing.T) {
	tel, err := telemetry.Start(context.Background(), telemetry.Config{Getenv: env(nil), KeepGlobals: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	_, span := tel.TracerProvider.Tracer("t").Start(context.Background(), "x")
	if !span.SpanContext().HasTraceID() || !span.IsRecording() {
		t.Error("no trace id without an exporter")
	}
	span.End()
}

// collector receives OTLP over HTTP and gRPC and keeps the span and metric
// names it saw.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu      sync.Mutex
	spans   []string
	metrics []string
}

func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.addTraces(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (c *collector) addTraces(req *coltracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.spans = append(c.spans, s.Name)
			}
		}
	}
}

func (c *collector) names() (spans, metrics []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.spans...), append([]string(nil), c.metrics...)
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch r.URL.Path {
	case "/v1/traces":
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.addTraces(&req)
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	case "/v1/metrics":
		var req colmetricpb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					c.metrics = append(c.metrics, m.Name)
				}
			}
		}
		c.mu.Unlock()
		b, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	default:
		http.NotFound(w, r)
	}
}

func emit(t *testing.T, tel *telemetry.Telemetry) {
	t.Helper()
	_, span := tel.TracerProvider.Tracer("t").Start(context.Background(), "adaptrag.run")
	span.End()
	c, err := tel.MeterProvider.Meter("t").Int64Counter("adaptrag.runs")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(context.Background(), 1, metric.WithAttributes(attribute.String("route", "factual")))
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown (flush): %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestExportHTTP(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "otlp")
	tel, err := telemetry.Start(context.Background(), telemetry.Config{KeepGlobals: true})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Plan != (telemetry.Plan{Traces: telemetry.ProtocolHTTP, Metrics: telemetry.ProtocolHTTP}) {
		t.Fatalf("plan %+v", tel.Plan)
	}
	emit(t, tel)
	spans, metrics := c.names()
	if !contains(spans, "adaptrag.run") || !contains(metrics, "adaptrag.runs") {
		t.Fatalf("collector got spans %v metrics %v", spans, metrics)
	}
}

func TestExportGRPC(t *testing.T) {
	c := &collector{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, c)
	go gs.Serve(ln)
	defer gs.Stop()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	tel, err := telemetry.Start(context.Background(), telemetry.Config{KeepGlobals: true})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Plan.Traces != telemetry.ProtocolGRPC || tel.Plan.Metrics != "" {
		t.Fatalf("plan %+v", tel.Plan)
	}
	emit(t, tel)
	if spans, _ := c.names(); !contains(spans, "adaptrag.run") {
		t.Fatalf("collector got spans %v", spans)
	}
}

func TestStartRejectsBadProtocol(t *testing.T) {
	_, err := telemetry.Start(context.Background(), telemetry.Config{KeepGlobals: true,
		Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})})
	if !errors.Is(err, telemetry.ErrConfig) {
		t.Fatalf("err = %v", err)
	}
}
