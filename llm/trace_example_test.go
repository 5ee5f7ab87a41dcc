package llm_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
)

// Each call is a client span "chat <model>" with the GenAI attributes.
// Prompts and completions are recorded only on opt-in.
func ExampleModel_WithTracing() {
	srv := llmtest.Start(llmtest.Fixed(llmtest.Reply{Content: "Within 7 days [1].", PromptTokens: 42, CompletionTokens: 6}))
	defer srv.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))

	m, _ := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, Model: "demo"})
	m = m.WithTracing(llm.Tracing{TracerProvider: tp}) // CaptureContent: false, the default
	_, _ = m.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "How long do returns take?"}}})

	s := rec.Ended()[0]
	fmt.Println(s.Name(), s.SpanKind())
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.input.messages":
			fmt.Println(kv.Key, kv.Value.String())
		}
	}
	// Output:
	// chat demo client
	// gen_ai.operation.name chat
	// gen_ai.provider.name openai
	// gen_ai.usage.input_tokens 42
	// gen_ai.usage.output_tokens 6
}
