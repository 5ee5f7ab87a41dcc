package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
)

func tracedModel(t *testing.T, url string, timeout time.Duration, capture bool) (*llm.Model, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return newModel(t, url, timeout).WithTracing(llm.Tracing{TracerProvider: tp, CaptureContent: capture}), rec
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func oneSpan(t *testing.T, rec *tracetest.SpanRecorder) sdktrace.ReadOnlySpan {
	t.Helper()
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	return spans[0]
}

func TestChatSpan(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Content: "7 days", PromptTokens: 31, CompletionTokens: 4}))
	m, rec := tracedModel(t, srv.URL, 0, false)
	req := userReq
	req.MaxTokens = 50
	req.JSON = true
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	s := oneSpan(t, rec)
	if s.Name() != "chat test-model" || s.SpanKind() != trace.SpanKindClient || s.Status().Code == codes.Error {
		t.Fatalf("span %q kind %v status %v", s.Name(), s.SpanKind(), s.Status())
	}
	if s.InstrumentationScope().Name != llm.ScopeName {
		t.Errorf("scope %q", s.InstrumentationScope().Name)
	}
	a := attrs(s)
	want := map[attribute.Key]any{
		"gen_ai.operation.name":      "chat",
		"gen_ai.provider.name":       "openai",
		"gen_ai.request.model":       "test-model",
		"gen_ai.request.max_tokens":  int64(50),
		"gen_ai.output.type":         "json",
		"gen_ai.usage.input_tokens":  int64(31),
		"gen_ai.usage.output_tokens": int64(4),
		"server.address":             "127.0.0.1",
	}
	for k, v := range want {
		if got := a[k].AsInterface(); got != v {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	if a["server.port"].AsInt64() == 0 {
		t.Error("no server.port")
	}
	if fr := a["gen_ai.response.finish_reasons"].AsStringSlice(); len(fr) != 1 || fr[0] != "stop" {
		t.Errorf("finish reasons %v", fr)
	}
	for _, k := range []attribute.Key{"gen_ai.input.messages", "gen_ai.output.messages"} {
		if _, ok := a[k]; ok {
			t.Errorf("%s recorded without opt-in", k)
		}
	}
}

func TestChatSpanNoMaxTokens(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("ok"))
	m, rec := tracedModel(t, srv.URL, 0, false)
	if _, err := m.Generate(context.Background(), userReq); err != nil {
		t.Fatal(err)
	}
	a := attrs(oneSpan(t, rec))
	for _, k := range []attribute.Key{"gen_ai.request.max_tokens", "gen_ai.output.type"} {
		if _, ok := a[k]; ok {
			t.Errorf("%s set on a request without it", k)
		}
	}
}

func TestChatSpanContentOptIn(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("退货须在七天内发起 [1]"))
	check := func(t *testing.T, a map[attribute.Key]attribute.Value) {
		t.Helper()
		var in []struct {
			Role  string
			Parts []struct{ Type, Content string }
		}
		if err := json.Unmarshal([]byte(a["gen_ai.input.messages"].AsString()), &in); err != nil {
			t.Fatalf("input messages %q: %v", a["gen_ai.input.messages"].AsString(), err)
		}
		if len(in) != 2 || in[0].Role != "system" || in[1].Role != "user" || in[1].Parts[0].Type != "text" ||
			in[1].Parts[0].Content != "how long does a refund take" {
			t.Errorf("input messages %+v", in)
		}
		out := a["gen_ai.output.messages"].AsString()
		if !strings.Contains(out, `"role":"assistant"`) || !strings.Contains(out, "退货须在七天内发起 [1]") || !strings.Contains(out, `"finish_reason":"stop"`) {
			t.Errorf("output messages %s", out)
		}
	}
	t.Run("config", func(t *testing.T) {
		m, rec := tracedModel(t, srv.URL, 0, true)
		if _, err := m.Generate(context.Background(), userReq); err != nil {
			t.Fatal(err)
		}
		check(t, attrs(oneSpan(t, rec)))
	})
	t.Run("context", func(t *testing.T) {
		m, rec := tracedModel(t, srv.URL, 0, false)
		if _, err := m.Generate(llm.WithContentCapture(context.Background(), true), userReq); err != nil {
			t.Fatal(err)
		}
		check(t, attrs(oneSpan(t, rec)))
	})
	t.Run("context opts out", func(t *testing.T) {
		m, rec := tracedModel(t, srv.URL, 0, true)
		if _, err := m.Generate(llm.WithContentCapture(context.Background(), false), userReq); err != nil {
			t.Fatal(err)
		}
		if _, ok := attrs(oneSpan(t, rec))["gen_ai.input.messages"]; ok {
			t.Error("content recorded after the context opted out")
		}
	})
}

func TestChatSpanErrors(t *testing.T) {
	tests := []struct {
		name    string
		reply   llmtest.Reply
		timeout time.Duration
		want    string
	}{
		{"unavailable", llmtest.Reply{Status: 500}, 0, "unavailable"},
		{"refused", llmtest.Reply{Refusal: "no"}, 0, "refused"},
		{"timeout", llmtest.Reply{Content: "late", Delay: time.Second}, 30 * time.Millisecond, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Fixed(tt.reply))
			m, rec := tracedModel(t, srv.URL, tt.timeout, false)
			if _, err := m.Generate(context.Background(), userReq); err == nil {
				t.Fatal("no error")
			}
			s := oneSpan(t, rec)
			if s.Status().Code != codes.Error {
				t.Errorf("status %v", s.Status())
			}
			if got := attrs(s)["error.type"].AsString(); got != tt.want {
				t.Errorf("error.type %q, want %q", got, tt.want)
			}
			if len(s.Events()) == 0 || s.Events()[0].Name != "exception" {
				t.Errorf("no exception event: %v", s.Events())
			}
		})
	}
}

func TestChatSpanStreamAndParent(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("七天内 [1]"))
	m, rec := tracedModel(t, srv.URL, 0, false)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "node generate")
	if _, err := m.GenerateStream(ctx, userReq, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	parent.End()
	var chat sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if strings.HasPrefix(s.Name(), "chat ") {
			chat = s
		}
	}
	if chat == nil || chat.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("chat span %v not a child of the caller's span", chat)
	}
	if attrs(chat)["gen_ai.usage.output_tokens"].AsInt64() == 0 {
		t.Error("a streamed call reported no output tokens")
	}
}
