// Quickstart embeds the adaptive pipeline in a program: the bundled sample
// handbook, the offline classifier, embedder and reranker, and a question
// from the command line (or three seed questions).
//
//	go run ./examples/quickstart "电子发票多久能开好？"
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/nodes"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
	"github.com/adaptrag/adaptrag/router"
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
	p, err := nodes.New(nodes.Deps{
		Docs: k.Target().Docs, FAQ: k.Target().FAQ, Embedder: emb, Classifier: clf,
		Reranker: rerank.NewLexical(rerank.LexicalConfig{}),
	}, nodes.Config{})
	if err != nil {
		log.Fatal(err)
	}
	questions := os.Args[1:]
	if len(questions) == 0 {
		questions = []string{"你好，你能做什么？", "退货要在几天内发起？", "对比一下差旅报销和招待报销的流程差异"}
	}
	for _, q := range questions {
		res, err := p.Ask(ctx, nodes.Request{Question: q}, nil)
		if err != nil {
			log.Fatal(err)
		}
		s := res.State
		fmt.Printf("[%s, %d chunks] %s\n  %s\n\n", s.Route.QueryType, len(s.Docs), q, s.Answer)
	}
}
