// Customnode changes the adaptive graph through Options.Graph, the one
// place to customise the pipeline: a guard before the decision that ends the
// run for questions about individual salaries, a filter before generation
// that drops passages from a source the caller may not quote, and a
// different small-talk reply. It prints the graph with the path each
// question took.
//
//	go run ./examples/customnode
package main

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval"
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
	p, err := adaptrag.New(ctx, adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{
		Graph: func(g *adaptrag.Graph) error {
			// A guard that ends the run.
			g.InsertBefore(adaptrag.NodeDecide, "guard", guard)
			g.RemoveEdges("guard")
			g.AddConditionalEdges("guard", answered, map[string]string{"stop": graph.End, "go": adaptrag.NodeDecide})
			// A node added at the evidence stage: it runs on the final
			// passages of every run that retrieves, Search and compound
			// questions included.
			g.InsertBefore(adaptrag.NodePassages, "no_legal", noLegal)
			// A node replaced.
			g.ReplaceNode(adaptrag.NodeChitchat, hello)
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, q := range []string{"What is the salary of my manager?", "Compare the approval chains for expenses under 1000 and over 5000", "thanks!"} {
		res, err := p.Ask(ctx, adaptrag.Request{Question: q})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s\n%s\n%d passages; answer: %s\n\n", q, p.Diagram().Text(&res.Debug.Steps), len(res.Docs), res.Answer)
	}
}

func guard(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
	if strings.Contains(strings.ToLower(s.Question), "salary of") {
		s.Answer, s.AnsweredBy = "I can't discuss individual salaries.", "guard"
	}
	return s, nil
}

func answered(s adaptrag.State) string {
	if s.Answer != "" {
		return "stop"
	}
	return "go"
}

func noLegal(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
	s.Docs = slices.DeleteFunc(s.Docs, func(h retrieval.Hit) bool { return h.Chunk.Source == "legal" })
	return s, nil
}

func hello(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
	s.Answer, s.AnsweredBy = "Hi! Ask me about the handbook.", "chitchat"
	return s, nil
}
