package langchaingo_test

import (
	"context"
	"fmt"

	"github.com/adaptrag/adaptrag"
	lc "github.com/adaptrag/adaptrag/integrations/langchaingo"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

func ExampleRetriever_GetRelevantDocuments() {
	ctx := context.Background()
	emb := embed.NewHashing(embed.HashingConfig{})
	k, _ := kb.Sample(ctx, emb)
	defer k.Close()
	pipe, _ := adaptrag.New(ctx, adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{})

	r := lc.NewRetriever(pipe, lc.RetrieverConfig{K: 2})
	// The application sets the caller from its own authentication.
	ctx = lc.WithCaller(ctx, lc.Caller{Scope: retrieval.Scope{Tenant: ""}, Actor: "alice"})
	docs, err := r.GetRelevantDocuments(ctx, "退货要在几天内发起？")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range docs {
		fmt.Println(d.Metadata[lc.MetaRoute], d.Metadata[lc.MetaOrigin])
	}
	// Output:
	// factual after_sales/退换货政策.md
	// factual faq.jsonl
}

func ExampleTool_Call() {
	ctx := context.Background()
	emb := embed.NewHashing(embed.HashingConfig{})
	k, _ := kb.Sample(ctx, emb)
	defer k.Close()
	pipe, _ := adaptrag.New(ctx, adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{})

	tool := lc.NewTool(pipe, lc.ToolConfig{})
	out, err := tool.Call(ctx, "how are you doing today?")
	fmt.Println(tool.Name(), err, len(out) > 0)
	// Output: knowledge_base <nil> true
}
