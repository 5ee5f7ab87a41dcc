// Customnode adds a node to the adaptive graph and swaps another, through
// nodes.Config: a "guard" that runs before generation and drops passages
// from a source the caller may not quote, and a chitchat node with a
// different reply. It prints the graph with the path the question took.
//
//	go run ./examples/customnode
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/nodes"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

func main() {
	ctx := context.Background()
	emb := embed.NewHashing(embed.HashingConfig{})
	k, err := kb.Sample(ctx, emb)
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()
	clf, err := router.NewOffline()
	if err != nil {
		log.Fatal(err)
	}
	guard := func(_ context.Context, s state.RAG) (state.RAG, error) {
		var kept = s.Docs[:0:0]
		for _, h := range s.Docs {
			if h.Chunk.Source != "legal" {
				kept = append(kept, h)
			}
		}
		s.Docs = kept
		return s, nil
	}
	hello := func(_ context.Context, s state.RAG) (state.RAG, error) {
		s.Answer, s.AnsweredBy = "Hi! Ask me about the handbook.", "chitchat"
		return s, nil
	}
	p, err := nodes.New(nodes.Deps{Docs: k.Target().Docs, FAQ: k.Target().FAQ, Embedder: emb, Classifier: clf,
		Reranker: rerank.NewLexical(rerank.LexicalConfig{})}, nodes.Config{
		Insert:  []nodes.Insert{{Name: "guard", Before: nodes.NodeGenerate, Fn: guard}},
		Replace: map[string]nodes.NodeFuncRAG{nodes.NodeChitchat: hello},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.Ask(ctx, nodes.Request{Question: "Compare the approval chains for expenses under 1000 and over 5000"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(p.Runnable().Diagram().Text(&res.Path))
	fmt.Printf("\n%d passages after the guard\n%s\n", len(res.State.Docs), res.State.Answer)
}
