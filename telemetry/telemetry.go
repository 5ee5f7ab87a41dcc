// Package telemetry installs the OpenTelemetry SDK for the CLI and the
// examples. The library packages only use the OTel API; this is the one
// place that picks an exporter.
package telemetry

import (
	"context"
	"errors"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Setup returns a recording tracer provider for service. When
// OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set, spans are
// exported there over OTLP/HTTP (Jaeger accepts it on port 4318);
// otherwise they are recorded only so that runs have trace ids. shutdown
// flushes the exporter. The global provider is not changed.
func Setup(ctx context.Context, service string) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	res := resource.NewSchemaless(semconv.ServiceName(service))
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, nil, errors.Join(errors.New("telemetry: OTLP exporter"), err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	sdk := sdktrace.NewTracerProvider(opts...)
	return sdk, sdk.Shutdown, nil
}
