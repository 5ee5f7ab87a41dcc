// Quickstart embeds the adaptive pipeline in a program: the bundled sample
// handbook with the offline classifier, embedder and reranker, and a
// question from the command line (or one question per route).
//
//	go run ./examples/quickstart "电子发票多久能开好？"
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

func main() {
	ctx := context.Background()
	emb := embed.NewHashing(embed.HashingConfig{})
	k, err := kb.Sample(ctx, emb)
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()
	p, err := adaptrag.New(ctx, adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{})
	if err != nil {
		log.Fatal(err)
	}
	questions := os.Args[1:]
	if len(questions) == 0 {
		questions = []string{"你好，你能做什么？", "退货要在几天内发起？", "对比一下差旅报销和招待报销的流程差异"}
	}
	for _, q := range questions {
		res, err := p.Ask(ctx, adaptrag.Request{Question: q})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("[%s, %d passages] %s\n  %s\n", res.Route.QueryType, len(res.Docs), q, res.Answer)
		for _, c := range res.Citations {
			fmt.Printf("  [%d] %s %s\n", c.N, c.Origin, c.Locator)
		}
		fmt.Println()
	}
}
