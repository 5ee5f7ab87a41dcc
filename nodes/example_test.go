package nodes_test

import (
	"context"
	"fmt"

	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/nodes"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
	"github.com/adaptrag/adaptrag/router"
)

// Embed the pipeline: the sample handbook, offline parts, one question per
// route class.
func ExamplePipeline_Ask() {
	ctx := context.Background()
	emb := embed.NewHashing(embed.HashingConfig{})
	k, err := kb.Sample(ctx, emb)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close()
	clf, err := router.NewOffline()
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := nodes.New(nodes.Deps{Docs: k.Target().Docs, FAQ: k.Target().FAQ, Embedder: emb, Classifier: clf,
		Reranker: rerank.NewLexical(rerank.LexicalConfig{})}, nodes.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, q := range []string{"你好，你能做什么？", "退货要在几天内发起？", "对比一下差旅报销和招待报销的流程差异"} {
		res, err := p.Ask(ctx, nodes.Request{Question: q}, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %d chunks\n", res.State.Route.QueryType, len(res.State.Docs))
	}
	// Output:
	// chitchat: 0 chunks
	// factual: 3 chunks
	// analytical: 8 chunks
}

// The strategy matrix is one value: here factual questions take five
// passages instead of three.
func ExampleDefaultStrategies() {
	st := nodes.DefaultStrategies()
	st.Factual.Candidates, st.Factual.Context = 5, 5
	fmt.Printf("%+v\n%+v\n", st.Factual, st.Analytical)
	// Output:
	// {Mode:dense Candidates:5 Rerank:false Context:5}
	// {Mode:hybrid Candidates:50 Rerank:true Context:8}
}
