// Package telemetry installs the OpenTelemetry SDK for the CLI and the
// examples. The library packages only use the OTel API; this is the one
// place that picks exporters.
//
// Everything is configured by the standard OTLP environment variables:
//
//	OTEL_EXPORTER_OTLP_ENDPOINT           collector for all signals (http://host:4318, or :4317 for grpc)
//	OTEL_EXPORTER_OTLP_TRACES_ENDPOINT    collector for traces only (overrides the above)
//	OTEL_EXPORTER_OTLP_PROTOCOL           http/protobuf (default) or grpc
//	OTEL_EXPORTER_OTLP_TRACES_PROTOCOL    the same, for traces only
//	OTEL_EXPORTER_OTLP_METRICS_ENDPOINT   collector for metrics (turns metrics on)
//	OTEL_EXPORTER_OTLP_METRICS_PROTOCOL   the same, for metrics only
//	OTEL_METRICS_EXPORTER=otlp            export metrics to OTEL_EXPORTER_OTLP_ENDPOINT too
//	OTEL_TRACES_EXPORTER=none             export no traces
//	OTEL_SERVICE_NAME                     service.name (default: the name the program passes)
//	OTEL_RESOURCE_ATTRIBUTES              more resource attributes (k=v,k=v)
//
// Traces are exported as soon as an endpoint is set. Metrics are exported
// only when asked for (a metrics endpoint or OTEL_METRICS_EXPORTER=otlp),
// because the most common local collector, Jaeger, takes traces only.
// Headers, timeouts, TLS and compression are read by the OTLP exporters
// themselves from their usual variables (OTEL_EXPORTER_OTLP_HEADERS, ...).
package telemetry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// OTLP protocols, as OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// ErrConfig reports an environment the package cannot act on, such as an
// unsupported protocol.
var ErrConfig = errors.New("telemetry: bad configuration")

// Config configures Start. The zero value reads the environment and names
// the service "adaptrag".
type Config struct {
	// ServiceName is service.name when OTEL_SERVICE_NAME is not set
	// (default "adaptrag").
	ServiceName string
	// ServiceVersion is service.version; "" takes the main module's
	// version from the build information.
	ServiceVersion string
	// Getenv reads the environment; nil means os.Getenv. The OTLP
	// exporters read their own settings (headers, TLS, the endpoints) from
	// the process environment whatever it is.
	Getenv func(string) string
	// KeepGlobals leaves the global tracer provider, meter provider and
	// propagator alone. By default Start installs its providers and the
	// W3C trace-context propagator as the globals, so that code which
	// takes the global provider (model calls, HTTP middleware) exports too.
	KeepGlobals bool
}

// Plan is what the environment asks for: the protocol of each signal's
// exporter, "" when that signal is not exported.
type Plan struct {
	Traces  string // ProtocolHTTP, ProtocolGRPC or ""
	Metrics string // ProtocolHTTP, ProtocolGRPC or ""
}

// PlanFromEnv reads the exporter selection from getenv (nil: os.Getenv).
// It fails with ErrConfig for a protocol other than http/protobuf or grpc.
func PlanFromEnv(getenv func(string) string) (Plan, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var p Plan
	var errs []error
	protocol := func(signal string) string {
		v := strings.TrimSpace(cmp.Or(getenv("OTEL_EXPORTER_OTLP_"+signal+"_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL")))
		switch v {
		case "", ProtocolHTTP:
			return ProtocolHTTP
		case ProtocolGRPC:
			return ProtocolGRPC
		}
		errs = append(errs, fmt.Errorf("%w: OTLP %s protocol %q (want %s or %s)", ErrConfig, strings.ToLower(signal), v, ProtocolHTTP, ProtocolGRPC))
		return ""
	}
	base := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	if getenv("OTEL_TRACES_EXPORTER") != "none" && (base || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") {
		p.Traces = protocol("TRACES")
	}
	metrics := getenv("OTEL_METRICS_EXPORTER")
	if metrics != "none" && (getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "" || (base && metrics == "otlp")) {
		p.Metrics = protocol("METRICS")
	}
	return p, errors.Join(errs...)
}

// Telemetry holds the installed providers.
type Telemetry struct {
	// TracerProvider always records, so that runs have trace ids; it
	// exports only when Plan.Traces is set.
	TracerProvider *sdktrace.TracerProvider
	// MeterProvider exports when Plan.Metrics is set; otherwise it is a
	// provider that records nothing.
	MeterProvider metric.MeterProvider
	// Plan is what was installed.
	Plan Plan

	shutdown []func(context.Context) error
}

// Shutdown flushes and stops the exporters.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range t.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// Start builds the resource and the providers the environment asks for
// (see the package documentation) and, unless c.KeepGlobals, installs them
// as the globals.
func Start(ctx context.Context, c Config) (*Telemetry, error) {
	plan, err := PlanFromEnv(c.Getenv)
	if err != nil {
		return nil, err
	}
	res, err := Resource(ctx, c)
	if err != nil {
		return nil, err
	}
	t := &Telemetry{Plan: plan}
	topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	switch plan.Traces {
	case ProtocolHTTP, ProtocolGRPC:
		exp, err := newTraceExporter(ctx, plan.Traces)
		if err != nil {
			return nil, err
		}
		topts = append(topts, sdktrace.WithBatcher(exp))
	}
	t.TracerProvider = sdktrace.NewTracerProvider(topts...)
	t.shutdown = append(t.shutdown, t.TracerProvider.Shutdown)
	t.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res))
	if plan.Metrics != "" {
		exp, err := newMetricExporter(ctx, plan.Metrics)
		if err != nil {
			return nil, errors.Join(err, t.Shutdown(ctx))
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
		t.MeterProvider = mp
		t.shutdown = append(t.shutdown, mp.Shutdown)
	}
	if !c.KeepGlobals {
		otel.SetTracerProvider(t.TracerProvider)
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
		if plan.Metrics != "" {
			otel.SetMeterProvider(t.MeterProvider)
		}
	}
	return t, nil
}

func newTraceExporter(ctx context.Context, protocol string) (sdktrace.SpanExporter, error) {
	var exp sdktrace.SpanExporter
	var err error
	if protocol == ProtocolGRPC {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP %s trace exporter: %w", protocol, err)
	}
	return exp, nil
}

func newMetricExporter(ctx context.Context, protocol string) (sdkmetric.Exporter, error) {
	var exp sdkmetric.Exporter
	var err error
	if protocol == ProtocolGRPC {
		exp, err = otlpmetricgrpc.New(ctx)
	} else {
		exp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP %s metric exporter: %w", protocol, err)
	}
	return exp, nil
}

// Resource describes the process: service.name (c.ServiceName, or
// OTEL_SERVICE_NAME when set), service.version (c.ServiceVersion, else the
// main module's version), the SDK, and OTEL_RESOURCE_ATTRIBUTES.
func Resource(ctx context.Context, c Config) (*resource.Resource, error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	name := cmp.Or(strings.TrimSpace(getenv("OTEL_SERVICE_NAME")), c.ServiceName, "adaptrag")
	version := cmp.Or(c.ServiceVersion, ModuleVersion())
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(resourceAttrs(getenv)...),
		// Last, so that nothing overrides them.
		resource.WithAttributes(semconv.ServiceName(name), semconv.ServiceVersion(version)))
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return res, nil
}

// resourceAttrs parses OTEL_RESOURCE_ATTRIBUTES through getenv (the SDK's
// own detector reads only the process environment).
func resourceAttrs(getenv func(string) string) []attribute.KeyValue {
	var out []attribute.KeyValue
	for _, kv := range strings.Split(getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			continue
		}
		out = append(out, attribute.String(k, strings.TrimSpace(v)))
	}
	return out
}

// ModuleVersion is the version of the main module from its build
// information: the tag for a module built with "go install module@version",
// the short VCS revision (with "+dirty" for local changes) for a build
// from a checkout, else "devel".
func ModuleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "devel"
	}
	return "devel-" + rev + dirty
}

// Setup returns a recording tracer provider for service, as Start with
// Config{ServiceName: service} does, and the function that flushes it and
// any metrics exporter. It installs the providers as the globals.
func Setup(ctx context.Context, service string) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	t, err := Start(ctx, Config{ServiceName: service})
	if err != nil {
		return nil, nil, err
	}
	return t.TracerProvider, t.Shutdown, nil
}
