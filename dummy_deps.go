//go:build tools

package tools

import (
	_ "github.com/invopop/jsonschema"
	_ "github.com/qdrant/go-client/qdrant"
	_ "github.com/tmc/langchaingo/llms/openai"
	_ "github.com/tmc/langchaingo/llms/ollama"
	_ "github.com/tmc/langchaingo/embeddings"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "go.opentelemetry.io/otel/sdk/trace/tracetest"
	_ "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	_ "golang.org/x/sync/errgroup"
	_ "google.golang.org/grpc"
	_ "go.uber.org/goleak"
)
