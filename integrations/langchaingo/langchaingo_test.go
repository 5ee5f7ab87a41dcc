package langchaingo_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag"
	lc "github.com/adaptrag/adaptrag/integrations/langchaingo"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

var sample struct {
	once sync.Once
	pipe *adaptrag.Pipeline
	err  error
}

func pipeline(t testing.TB) *adaptrag.Pipeline {
	t.Helper()
	sample.once.Do(func() {
		emb := embed.NewHashing(embed.HashingConfig{})
		k, err := kb.Sample(context.Background(), emb)
		if err != nil {
			sample.err = err
			return
		}
		sample.pipe, sample.err = adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{})
	})
	if sample.err != nil {
		t.Fatal(sample.err)
	}
	return sample.pipe
}

var other = lc.Caller{Scope: retrieval.Scope{Tenant: "other"}, Actor: "bob"}

func TestTool(t *testing.T) {
	tool := lc.NewTool(pipeline(t), lc.ToolConfig{})
	if tool.Name() != lc.DefaultToolName || !strings.Contains(tool.Description(), "Input:") {
		t.Fatalf("name %q description %q", tool.Name(), tool.Description())
	}
	out, err := tool.Call(context.Background(), "  \"退货要在几天内发起？\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "7 天") || !strings.Contains(out, "Sources:\n[") || !strings.Contains(out, "after_sales/") {
		t.Fatalf("tool output %q", out)
	}
	// A refused input is an observation the agent can act on.
	out, err = tool.Call(context.Background(), "   ")
	if err != nil || !strings.Contains(out, "cannot take this input") {
		t.Fatalf("empty input: %q, %v", out, err)
	}
}

func TestToolCaller(t *testing.T) {
	q := "退货要在几天内发起？"
	scoped := lc.NewTool(pipeline(t), lc.ToolConfig{Name: "kb", Caller: other})
	out, err := scoped.Call(context.Background(), q)
	if err != nil || strings.Contains(out, "Sources:") {
		t.Fatalf("the config's tenant saw the default tenant's documents: %q %v", out, err)
	}
	// The context's caller wins over the config's.
	out, err = scoped.Call(lc.WithCaller(context.Background(), lc.Caller{}), q)
	if err != nil || !strings.Contains(out, "Sources:") {
		t.Fatalf("the context's caller was not used: %q %v", out, err)
	}
	out, err = lc.NewTool(pipeline(t), lc.ToolConfig{}).Call(lc.WithCaller(context.Background(), other), q)
	if err != nil || strings.Contains(out, "Sources:") {
		t.Fatalf("the context's tenant saw the default tenant's documents: %q %v", out, err)
	}
}

func TestRetriever(t *testing.T) {
	r := lc.NewRetriever(pipeline(t), lc.RetrieverConfig{K: 3, Mode: plan.ModeHybrid})
	docs, err := r.GetRelevantDocuments(context.Background(), "对比一下差旅报销和招待报销的流程差异")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 || len(docs) > 3 {
		t.Fatalf("%d documents", len(docs))
	}
	for i, d := range docs {
		m := d.Metadata
		if d.PageContent == "" || m[lc.MetaOrigin] == "" || m[lc.MetaRoute] != "analytical" || m[lc.MetaRank] != i+1 {
			t.Errorf("document %d: %+v", i, d)
		}
		rel, ok := m[lc.MetaRelevance].(float64)
		if !ok || rel < 0 || rel > 1 || d.Score != float32(rel) {
			t.Errorf("document %d relevance %v score %v", i, m[lc.MetaRelevance], d.Score)
		}
		if _, ok := m[lc.MetaLocator].(string); !ok {
			t.Errorf("document %d has no locator", i)
		}
	}
	if docs, err := r.GetRelevantDocuments(lc.WithCaller(context.Background(), other), "差旅报销"); err != nil || len(docs) != 0 {
		t.Errorf("another tenant got %d documents (%v)", len(docs), err)
	}
	small, err := lc.NewRetriever(pipeline(t), lc.RetrieverConfig{}).GetRelevantDocuments(context.Background(), "how are you doing today?")
	if err != nil || len(small) != 0 {
		t.Errorf("small talk retrieved %d documents (%v)", len(small), err)
	}
	_, err = lc.NewRetriever(pipeline(t), lc.RetrieverConfig{Mode: "psychic"}).GetRelevantDocuments(context.Background(), "退货")
	if !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("bad mode: %v", err)
	}
}
