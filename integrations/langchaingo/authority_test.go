package langchaingo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/adaptrag/adaptrag"
	lc "github.com/adaptrag/adaptrag/integrations/langchaingo"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

// The retriever and the tool act for the caller in their context, and on a
// pipeline that requires a tenant they fail closed without one: the
// sample handbook lives in the default tenant, so a caller of another
// tenant finds nothing of it.
func TestCallerOnTenantPipeline(t *testing.T) {
	emb := embed.NewHashing(embed.HashingConfig{})
	k, err := kb.Sample(context.Background(), emb)
	if err != nil {
		t.Fatal(err)
	}
	p, err := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{RequireTenant: true})
	if err != nil {
		t.Fatal(err)
	}
	r := lc.NewRetriever(p, lc.RetrieverConfig{})
	if _, err := r.GetRelevantDocuments(context.Background(), "退货要在几天内发起？"); !errors.Is(err, adaptrag.ErrNoTenant) {
		t.Fatalf("retriever without a caller: err = %v, want ErrNoTenant", err)
	}
	if _, err := lc.NewTool(p, lc.ToolConfig{}).Call(context.Background(), "退货要在几天内发起？"); !errors.Is(err, adaptrag.ErrNoTenant) {
		t.Fatalf("tool without a caller: err = %v, want ErrNoTenant", err)
	}
	ctx := lc.WithCaller(context.Background(), lc.Caller{Scope: retrieval.Scope{Tenant: "acme"}})
	docs, err := r.GetRelevantDocuments(ctx, "退货要在几天内发起？")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 0 {
		t.Fatalf("tenant acme got %d passages of the default tenant's handbook", len(docs))
	}
	// The configured caller stands in when the context has none.
	r = lc.NewRetriever(p, lc.RetrieverConfig{Caller: lc.Caller{Scope: retrieval.Scope{Tenant: "acme"}}})
	if _, err := r.GetRelevantDocuments(context.Background(), "退货要在几天内发起？"); err != nil {
		t.Fatal(err)
	}
}

// A node inserted at the evidence stage acts on the retriever's documents.
func TestRetrieverRunsEvidenceStage(t *testing.T) {
	emb := embed.NewHashing(embed.HashingConfig{})
	k, err := kb.Sample(context.Background(), emb)
	if err != nil {
		t.Fatal(err)
	}
	p, err := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{
		Graph: func(g *adaptrag.Graph) error {
			g.InsertBefore(adaptrag.NodePassages, "redact", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
				for i := range s.Docs {
					s.Docs[i].Chunk.Text = "[redacted]"
				}
				return s, nil
			})
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := lc.NewRetriever(p, lc.RetrieverConfig{}).GetRelevantDocuments(context.Background(), "退货要在几天内发起？")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no documents")
	}
	for _, d := range docs {
		if d.PageContent != "[redacted]" {
			t.Fatalf("document not redacted: %.40q", d.PageContent)
		}
	}
}
