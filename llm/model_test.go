package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
)

func newModel(t *testing.T, url string, timeout time.Duration) *llm.Model {
	t.Helper()
	m, err := llm.NewOpenAI(llm.Config{BaseURL: url, APIKey: "sk-test", Model: "test-model", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var userReq = llm.Request{Messages: []llm.Message{
	{Role: "system", Content: "be brief"},
	{Role: "user", Content: "how long does a refund take"},
}}

func TestGenerateUsageAndRequest(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Content: "7 days", PromptTokens: 31, CompletionTokens: 4}))
	m := newModel(t, srv.URL, 0)
	req := userReq
	req.JSON = true
	req.MaxTokens = 50
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "7 days" || resp.Usage != (llm.Usage{InputTokens: 31, OutputTokens: 4}) || resp.Model != "test-model" {
		t.Fatalf("resp = %+v", resp)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := reqs[0]
	if got.Model != "test-model" || len(got.Messages) != 2 || got.Messages[0].Role != "system" ||
		got.LastUser() != "how long does a refund take" {
		t.Fatalf("recorded request = %+v", got)
	}
	var rf struct{ Type string }
	if err := json.Unmarshal(got.ResponseFormat, &rf); err != nil || rf.Type != "json_object" {
		t.Fatalf("response_format = %s (%v)", got.ResponseFormat, err)
	}
	var body map[string]any
	if err := json.Unmarshal(got.Body, &body); err != nil || body["max_completion_tokens"] != float64(50) {
		t.Fatalf("body = %s", got.Body)
	}
}

func TestGenerateEstimatedUsage(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("退货需在签收后七日内发起"))
	resp, err := newModel(t, srv.URL, 0).Generate(context.Background(), userReq)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.OutputTokens != 12 || resp.Usage.InputTokens != llmtest.EstimateTokens("be brief\nhow long does a refund take") {
		t.Fatalf("usage = %+v", resp.Usage)
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  error
	}{
		{"http 500", llmtest.Reply{Status: 500}, llm.ErrUnavailable},
		{"http 429", llmtest.Reply{Status: 429}, llm.ErrUnavailable},
		{"malformed body", llmtest.Reply{RawBody: `{"choices": [`}, llm.ErrUnavailable},
		{"refusal", llmtest.Reply{Refusal: "I can't help with that."}, llm.ErrRefused},
		{"empty content", llmtest.Reply{Content: "  "}, llm.ErrRefused},
		{"content filter", llmtest.Reply{Content: "partial", FinishReason: "content_filter"}, llm.ErrRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Fixed(tt.reply))
			_, err := newModel(t, srv.URL, 0).Generate(context.Background(), userReq)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err %v must not look like a timeout", err)
			}
		})
	}
}

func TestGenerateConnectionRefused(t *testing.T) {
	_, err := newModel(t, llmtest.RefusedURL(t), 0).Generate(context.Background(), userReq)
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestGenerateTimeout(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Content: "late", Delay: 2 * time.Second}))
	t.Run("config timeout", func(t *testing.T) {
		start := time.Now()
		_, err := newModel(t, srv.URL, 50*time.Millisecond).Generate(context.Background(), userReq)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
		if errors.Is(err, llm.ErrUnavailable) {
			t.Fatalf("timeout reported as unavailable: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("took %v", d)
		}
	})
	t.Run("caller deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := newModel(t, srv.URL, 0).Generate(ctx, userReq)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
	})
	t.Run("caller cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Millisecond, cancel)
		_, err := newModel(t, srv.URL, 0).Generate(ctx, userReq)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want Canceled", err)
		}
	})
}

func TestPerTokenDelay(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{
		Content: "ok", PromptTokens: 40, CompletionTokens: 10, PerTokenDelay: time.Millisecond}))
	start := time.Now()
	if _, err := newModel(t, srv.URL, 0).Generate(context.Background(), userReq); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("50 tokens at 1ms each answered in %v", d)
	}
}

func TestBadRole(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("x"))
	_, err := newModel(t, srv.URL, 0).Generate(context.Background(),
		llm.Request{Messages: []llm.Message{{Role: "wizard", Content: "x"}}})
	if err == nil || srv.Count() != 0 {
		t.Fatalf("err = %v, requests = %d", err, srv.Count())
	}
}

func TestConcurrentGenerate(t *testing.T) {
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "echo:" + r.LastUser()}
	})
	m := newModel(t, srv.URL, 0)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			q := fmt.Sprintf("q%d", i)
			resp, err := m.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: q}}})
			if err == nil && resp.Text != "echo:"+q {
				err = fmt.Errorf("got %q for %q", resp.Text, q)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if srv.Count() != 8 {
		t.Fatalf("%d requests", srv.Count())
	}
}

func TestNewPicksProvider(t *testing.T) {
	if _, err := llm.New(llm.Config{}); !errors.Is(err, llm.ErrNotConfigured) {
		t.Fatalf("empty config: err = %v", err)
	}
	tests := []struct {
		c    llm.Config
		want string
	}{
		{llm.Config{APIKey: "k"}, "openai"},
		{llm.Config{BaseURL: "http://localhost:8000/v1"}, "openai"},
		{llm.Config{BaseURL: "http://x/v1", OllamaHost: "http://localhost:11434"}, "openai"},
		{llm.Config{OllamaHost: "http://localhost:11434"}, "ollama"},
	}
	for _, tt := range tests {
		g, err := llm.New(tt.c)
		if err != nil {
			t.Fatalf("%v: %v", tt.c, err)
		}
		if p := g.(*llm.Model).Provider(); p != tt.want {
			t.Errorf("%v: provider %q, want %q", tt.c, p, tt.want)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("OPENAI_BASE_URL", "http://h/v1")
	t.Setenv("OPENAI_MODEL", "m")
	t.Setenv("OLLAMA_HOST", "http://o:11434")
	t.Setenv("OLLAMA_MODEL", "qwen")
	c := llm.ConfigFromEnv()
	want := llm.Config{APIKey: "sk-secret", BaseURL: "http://h/v1", Model: "m", OllamaHost: "http://o:11434", OllamaModel: "qwen"}
	if c != want || !c.Configured() {
		t.Fatalf("got %v", c)
	}
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OLLAMA_HOST", "")
	if llm.ConfigFromEnv().Configured() {
		t.Fatal("configured with no key, base URL or host")
	}
}

func TestConfigRedactsKey(t *testing.T) {
	c := llm.Config{APIKey: "sk-very-secret", Model: "m"}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("cfg", "llm", c)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), logged.String()} {
		if strings.Contains(s, "sk-very-secret") {
			t.Errorf("key leaked: %s", s)
		}
		if !strings.Contains(s, "REDACTED") {
			t.Errorf("no redaction marker: %s", s)
		}
	}
}

func TestGenerateStreamThroughLangchaingo(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text("退货须在签收后七天内发起 [1]。"))
	m, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, APIKey: "k", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var pieces []string
	resp, err := m.GenerateStream(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "退货几天？"}}},
		func(s string) error { pieces = append(pieces, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) < 2 || strings.Join(pieces, "") != resp.Text || resp.Text != "退货须在签收后七天内发起 [1]。" {
		t.Errorf("pieces %q, text %q", pieces, resp.Text)
	}
	if !srv.Requests()[0].Stream {
		t.Error("the request did not ask for a stream")
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Errorf("usage %+v not reported by the stream", resp.Usage)
	}
	stop := errors.New("enough")
	if _, err := m.GenerateStream(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}},
		func(string) error { return stop }); !errors.Is(err, stop) && err == nil {
		t.Errorf("a failing callback did not stop the stream: %v", err)
	}
}

// A deadline that ends a streamed completion midway must not yield the
// text streamed so far as an answer: langchaingo returns it with a nil
// error.
func TestGenerateStreamCutByDeadline(t *testing.T) {
	content := strings.Repeat("tok ", 40) // 40 deltas of 4 runes
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Content: content, ChunkDelay: 20 * time.Millisecond}))
	for _, tt := range []struct {
		name    string
		timeout time.Duration // the model's own
		ctx     time.Duration // the caller's
	}{{"caller deadline", 0, 200 * time.Millisecond}, {"model timeout", 200 * time.Millisecond, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			var streamed strings.Builder
			resp, err := newModel(t, srv.URL, tt.timeout).GenerateStream(ctx, userReq, func(s string) error {
				streamed.WriteString(s)
				return nil
			})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, text %q; want DeadlineExceeded", err, resp.Text)
			}
			if resp.Text != "" {
				t.Errorf("a cut answer was returned: %q", resp.Text)
			}
			if streamed.Len() == 0 || streamed.Len() >= len(content) {
				t.Errorf("streamed %d of %d bytes: the deadline did not cut the stream midway", streamed.Len(), len(content))
			}
		})
	}
}

// A server that answers "stream": true with a plain completion gets the
// same answer from GenerateStream as from Generate.
func TestGenerateStreamServerThatDoesNotStream(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Content: "7 days [1]", IgnoreStream: true}))
	m := newModel(t, srv.URL, 0)
	for i := range 2 {
		var pieces []string
		resp, err := m.GenerateStream(context.Background(), userReq, func(s string) error { pieces = append(pieces, s); return nil })
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if resp.Text != "7 days [1]" || strings.Join(pieces, "") != resp.Text {
			t.Fatalf("call %d: text %q, pieces %q", i+1, resp.Text, pieces)
		}
	}
	reqs := srv.Requests()
	// The first call streams, finds nothing and asks again without a
	// stream; the second knows the server does not stream.
	if len(reqs) != 3 || !reqs[0].Stream || reqs[1].Stream || reqs[2].Stream {
		t.Fatalf("%d requests, stream flags %v", len(reqs), streamFlags(reqs))
	}
}

// A server that sends neither a stream nor a plain answer is unavailable,
// not a model that refused.
func TestGenerateStreamNothingIsUnavailable(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Content: "", IgnoreStream: true}))
	_, err := newModel(t, srv.URL, 0).GenerateStream(context.Background(), userReq, func(string) error { return nil })
	if !errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrRefused) {
		t.Fatalf("err = %v, want ErrUnavailable and not ErrRefused", err)
	}
}

func streamFlags(reqs []llmtest.Request) []bool {
	var out []bool
	for _, r := range reqs {
		out = append(out, r.Stream)
	}
	return out
}
