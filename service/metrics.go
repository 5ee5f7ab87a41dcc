package service

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Metrics is an OpenTelemetry meter provider whose instruments are served
// in the Prometheus text format, together with the Go runtime's and the
// process's own metrics. Give Provider to the pipeline
// (adaptrag.Options.MeterProvider) and to Config.MeterProvider, and serve
// Handler at /metrics (Config.Metrics).
type Metrics struct {
	Provider *sdkmetric.MeterProvider
	Handler  http.Handler
}

// secondsBuckets are the histogram boundaries of every instrument measured
// in seconds: from a millisecond (an offline node) to a minute (a model
// answer). The SDK's defaults are made for milliseconds.
var secondsBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// NewMetrics builds a meter provider exporting through its own Prometheus
// registry (the process-wide default registry is left alone).
func NewMetrics() (*Metrics, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, err
	}
	seconds := sdkmetric.NewView(
		sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram, Unit: "s"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: secondsBuckets}},
	)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithView(seconds))
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: nil})
	return &Metrics{Provider: mp, Handler: h}, nil
}

// Shutdown stops the meter provider.
func (m *Metrics) Shutdown(ctx context.Context) error { return m.Provider.Shutdown(ctx) }

// httpMeters are the service's own instruments, after the OpenTelemetry
// HTTP semantic conventions.
type httpMeters struct {
	duration metric.Float64Histogram   // http.server.request.duration{method, route, status}
	active   metric.Int64UpDownCounter // http.server.active_requests{method}
	runs     metric.Int64UpDownCounter // adaptrag.service.runs.active
	rejected metric.Int64Counter       // adaptrag.service.rejected{reason}
}

func newHTTPMeters(mp metric.MeterProvider) (*httpMeters, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName)
	hm := &httpMeters{}
	var err error
	if hm.duration, err = m.Float64Histogram("http.server.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP requests by method, route and status.")); err != nil {
		return nil, err
	}
	if hm.active, err = m.Int64UpDownCounter("http.server.active_requests", metric.WithDescription("HTTP requests being served.")); err != nil {
		return nil, err
	}
	if hm.runs, err = m.Int64UpDownCounter("adaptrag.service.runs.active", metric.WithDescription("Runs (asks and searches) in progress.")); err != nil {
		return nil, err
	}
	if hm.rejected, err = m.Int64Counter("adaptrag.service.rejected", metric.WithDescription("Requests refused before running, by reason (an error code).")); err != nil {
		return nil, err
	}
	return hm, nil
}

// statusWriter records the status of a response and whether its header
// was sent.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (Flush, write
// deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
