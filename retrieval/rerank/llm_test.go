package rerank_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
)

var passageLine = regexp.MustCompile(`(?m)^\[(\d+)\] (.*)$`)

// judge plays the model: it reads the prompt and scores each passage by
// word overlap with the query, answering in the requested JSON.
func judge(prompt string) string {
	query := strings.TrimPrefix(strings.SplitN(prompt, "\n", 2)[0], "Query: ")
	var scores []float64
	for _, m := range passageLine.FindAllStringSubmatch(prompt, -1) {
		scores = append(scores, min(10, scoreByOverlap(query, m[2])))
	}
	b, _ := json.Marshal(map[string]any{"scores": scores})
	return string(b)
}

func lastUser(req llm.Request) string { return req.Messages[len(req.Messages)-1].Content }

func TestLLMBatchesAndUsage(t *testing.T) {
	var calls atomic.Int32
	g := llm.GeneratorFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		calls.Add(1)
		if !req.JSON {
			t.Error("the reranker should ask for JSON mode")
		}
		return llm.Response{Text: "```json\n" + judge(lastUser(req)) + "\n```", Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}, nil
	})
	r := rerank.NewLLM(g, rerank.LLMConfig{Batch: 3})
	hits := mkHits("opening hours", "weather", "refund", "contact", "refund policy annual", "careers", "refund policy")
	out, u, err := r.RerankUsage(context.Background(), "refund policy annual", hits, 3)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 || r.Calls() != 3 {
		t.Errorf("prompts = %d (Calls %d), want 3 for 7 hits in batches of 3", calls.Load(), r.Calls())
	}
	if got := ids(out); !slices.Equal(got, []string{"c4", "c6", "c2"}) {
		t.Errorf("order = %v, want [c4 c6 c2]", got)
	}
	if u != (llm.Usage{InputTokens: 300, OutputTokens: 30}) {
		t.Errorf("call usage = %+v, want 300/30", u)
	}
	if _, err := r.Rerank(context.Background(), "refund", hits[:2], 1); err != nil {
		t.Fatal(err)
	}
	if r.Usage() != (llm.Usage{InputTokens: 400, OutputTokens: 40}) {
		t.Errorf("total usage = %+v, want 400/40", r.Usage())
	}
}

func TestLLMBadAnswers(t *testing.T) {
	for name, text := range map[string]string{
		"prose":        "Passage 2 is the best.",
		"wrong count":  `{"scores": [1, 2]}`,
		"off scale":    `{"scores": [1, 42, 3]}`,
		"negative":     `{"scores": [1, -1, 3]}`,
		"not a number": `{"scores": [1, "high", 3]}`,
		"broken json":  `{"scores": [1, 2,`,
	} {
		t.Run(name, func(t *testing.T) {
			g := llm.GeneratorFunc(func(context.Context, llm.Request) (llm.Response, error) {
				return llm.Response{Text: text}, nil
			})
			_, err := rerank.NewLLM(g, rerank.LLMConfig{}).Rerank(context.Background(), "q", mkHits("a", "b", "c"), 3)
			if !errors.Is(err, rerank.ErrBadResponse) {
				t.Fatalf("err = %v, want ErrBadResponse", err)
			}
		})
	}
}

func TestLLMErrors(t *testing.T) {
	t.Run("generator error", func(t *testing.T) {
		g := llm.GeneratorFunc(func(context.Context, llm.Request) (llm.Response, error) {
			return llm.Response{}, llm.ErrNotConfigured
		})
		_, err := rerank.NewLLM(g, rerank.LLMConfig{}).Rerank(context.Background(), "q", mkHits("a"), 1)
		if !errors.Is(err, llm.ErrNotConfigured) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		g := llm.GeneratorFunc(func(ctx context.Context, _ llm.Request) (llm.Response, error) {
			<-ctx.Done()
			return llm.Response{}, fmt.Errorf("call: %w", ctx.Err())
		})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := rerank.NewLLM(g, rerank.LLMConfig{Batch: 1}).Rerank(ctx, "q", mkHits("a", "b", "c"), 3)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
	})
	t.Run("panic in generator", func(t *testing.T) {
		g := llm.GeneratorFunc(func(context.Context, llm.Request) (llm.Response, error) { panic("boom") })
		_, err := rerank.NewLLM(g, rerank.LLMConfig{Batch: 1}).Rerank(context.Background(), "q", mkHits("a", "b"), 2)
		if !errors.Is(err, rerank.ErrPanic) {
			t.Fatalf("err = %v, want ErrPanic", err)
		}
	})
	t.Run("nil generator", func(t *testing.T) {
		_, err := rerank.NewLLM(nil, rerank.LLMConfig{}).Rerank(context.Background(), "q", mkHits("a"), 1)
		if !errors.Is(err, llm.ErrNotConfigured) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestLLMPromptTruncates(t *testing.T) {
	var prompt string
	g := llm.GeneratorFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
		prompt = lastUser(req)
		return llm.Response{Text: `{"scores":[5]}`}, nil
	})
	hits := mkHits(strings.Repeat("word ", 1000))
	hits[0].Chunk.Title = "Long doc"
	if _, err := rerank.NewLLM(g, rerank.LLMConfig{MaxChars: 50}).Rerank(context.Background(), "q", hits, 1); err != nil {
		t.Fatal(err)
	}
	if len(prompt) > 400 || !strings.Contains(prompt, "[1] Long doc") {
		t.Errorf("prompt (%d bytes) not truncated or lacks the title:\n%s", len(prompt), prompt)
	}
}

// TestLLMAgainstOpenAIWire drives the reranker through the real
// langchaingo OpenAI client and a loopback chat-completions server.
func TestLLMAgainstOpenAIWire(t *testing.T) {
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: judge(req.LastUser()), PromptTokens: 120, CompletionTokens: 12}
	})
	g, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, Model: "judge"})
	if err != nil {
		t.Fatal(err)
	}
	r := rerank.NewLLM(g, rerank.LLMConfig{Batch: 2, Concurrency: 2})
	hits := mkHits("refund", "hours", "refund policy")
	out, u, err := r.RerankUsage(context.Background(), "refund policy", hits, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(out); !slices.Equal(got, []string{"c2", "c0"}) {
		t.Errorf("order = %v, want [c2 c0]", got)
	}
	if srv.Count() != 2 || u != (llm.Usage{InputTokens: 240, OutputTokens: 24}) {
		t.Errorf("%d requests, usage %+v; want 2 and 240/24", srv.Count(), u)
	}
	if rf := srv.Requests()[0].ResponseFormat; !strings.Contains(string(rf), "json_object") {
		t.Errorf("response_format = %s, want JSON mode", rf)
	}
	// Garbage from the server becomes a fallback under Safe.
	bad := llmtest.NewServer(t, llmtest.Text("I think passage one."))
	gb, _ := llm.NewOpenAI(llm.Config{BaseURL: bad.URL, Model: "judge"})
	o := rerank.Safe(context.Background(), rerank.NewLLM(gb, rerank.LLMConfig{}), "refund", hits, 2)
	if !o.Fallback || !errors.Is(o.Cause, rerank.ErrBadResponse) || o.Reranker != "llm" {
		t.Errorf("outcome = %+v, want a fallback caused by ErrBadResponse", o)
	}
}
