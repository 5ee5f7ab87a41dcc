package telemetry_test

import (
	"context"
	"fmt"

	"github.com/adaptrag/adaptrag/telemetry"
)

func ExamplePlanFromEnv() {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4317",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
	}
	p, err := telemetry.PlanFromEnv(func(k string) string { return env[k] })
	fmt.Printf("traces=%q metrics=%q err=%v\n", p.Traces, p.Metrics, err)
	// Output: traces="grpc" metrics="" err=<nil>
}

func ExampleStart() {
	ctx := context.Background()
	tel, err := telemetry.Start(ctx, telemetry.Config{ServiceName: "my-rag", KeepGlobals: true,
		Getenv: func(string) string { return "" }}) // nothing set: spans are recorded, not exported
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tel.Shutdown(ctx)
	_, span := tel.TracerProvider.Tracer("example").Start(ctx, "work")
	fmt.Println(span.SpanContext().HasTraceID(), tel.Plan.Traces == "")
	span.End()
	// Output: true true
}
