package adaptrag_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

// openSample builds the bundled sample knowledge base in memory.
func openSample() (*kb.KB, retrieval.Embedder) {
	emb := embed.NewHashing(embed.HashingConfig{})
	k, err := kb.Sample(context.Background(), emb)
	if err != nil {
		panic(err)
	}
	return k, emb
}

// Ask one question per route: small talk retrieves nothing, a factual
// question takes the dense top 3, an analytical one hybrid 50 reranked to 8.
func ExamplePipeline_Ask() {
	k, emb := openSample()
	defer k.Close()
	p, err := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, q := range []string{"你好，你能做什么？", "退货要在几天内发起？", "对比一下差旅报销和招待报销的流程差异"} {
		res, err := p.Ask(context.Background(), adaptrag.Request{Question: q})
		if err != nil {
			fmt.Println(err)
			return
		}
		if res.Plan == nil {
			fmt.Printf("%s: no retrieval\n", res.Route.QueryType)
			continue
		}
		fmt.Printf("%s: %s %d -> %d\n", res.Route.QueryType, res.Plan.Mode, res.Plan.DocTopK, res.Plan.FinalContextTopN)
	}
	// Output:
	// chitchat: no retrieval
	// factual: dense 3 -> 3
	// analytical: hybrid 50 -> 8
}

// Stream reports each node as it finishes, then the result.
func ExamplePipeline_Stream() {
	k, emb := openSample()
	defer k.Close()
	p, _ := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{})
	var nodes []string
	for ev, err := range p.Stream(context.Background(), adaptrag.Request{Question: "退货要在几天内发起？"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Kind {
		case adaptrag.EventNode:
			nodes = append(nodes, ev.Node)
		case adaptrag.EventResult:
			fmt.Println(strings.Join(nodes, " > "))
			fmt.Println(ev.Result.AnsweredBy, len(ev.Result.Citations) > 0)
		}
	}
	// Output:
	// decide > understand > classify > plan > expand > faq > dense > evidence > passages > generate
	// extractive true
}

// Search returns the evidence only, routed and planned as Ask would, for an
// agent that writes its own answer.
func ExamplePipeline_Search() {
	k, emb := openSample()
	defer k.Close()
	p, _ := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{})
	res, err := p.Search(context.Background(), adaptrag.SearchRequest{Query: "对比一下差旅报销和招待报销的流程差异", K: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Route.QueryType, res.Plan.Mode, len(res.Docs), res.Answer == "", res.AnsweredBy)
	// Output:
	// analytical hybrid 4 true search
}

// A guard inserted before the decision ends the run when it has answered:
// the run goes nowhere else, and Ask still checks input, traces and reports
// the path.
func Example_guard() {
	k, emb := openSample()
	defer k.Close()
	p, err := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{
		Graph: func(g *adaptrag.Graph) error {
			g.InsertBefore(adaptrag.NodeDecide, "guard", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
				if strings.Contains(strings.ToLower(s.Question), "salary of") {
					s.Answer, s.AnsweredBy = "I can't discuss individual salaries.", "guard"
				}
				return s, nil
			})
			g.RemoveEdges("guard")
			g.AddConditionalEdges("guard", func(s adaptrag.State) string {
				if s.Answer != "" {
					return "stop"
				}
				return "go"
			}, map[string]string{"stop": graph.End, "go": adaptrag.NodeDecide})
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := p.Ask(context.Background(), adaptrag.Request{Question: "What is the salary of my manager?"})
	fmt.Println(res.Path, res.Answer)
	// Output:
	// [guard] I can't discuss individual salaries.
}

// Replace a node: here small talk (that is not a plain greeting, which the
// decision answers) gets a fixed reply of your own.
func Example_replaceNode() {
	k, emb := openSample()
	defer k.Close()
	p, _ := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{
		Graph: func(g *adaptrag.Graph) error {
			g.ReplaceNode(adaptrag.NodeChitchat, func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
				s.Answer, s.AnsweredBy = "Hi! Ask me about the handbook.", "chitchat"
				return s, nil
			})
			return nil
		},
	})
	res, _ := p.Ask(context.Background(), adaptrag.Request{Question: "tell me a joke"})
	fmt.Println(res.Answer)
	// Output:
	// Hi! Ask me about the handbook.
}

// Add a node with its own conditional edge: keep only passages of the IT
// source, and skip generation when none is left.
func Example_addNode() {
	k, emb := openSample()
	defer k.Close()
	p, _ := adaptrag.New(context.Background(), adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}, adaptrag.Options{
		Graph: func(g *adaptrag.Graph) error {
			g.InsertBefore(adaptrag.NodeGenerate, "only_it", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
				s.Docs = slices.DeleteFunc(s.Docs, func(h retrieval.Hit) bool { return h.Chunk.Source != "it" })
				return s, nil
			})
			g.RemoveEdges("only_it")
			g.AddConditionalEdges("only_it", func(s adaptrag.State) string {
				if len(s.Docs) == 0 {
					return "none"
				}
				return "some"
			}, map[string]string{"none": "decline", "some": adaptrag.NodeGenerate})
			g.AddNode("decline", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
				s.Answer, s.AnsweredBy = "Only IT questions are answered here.", "decline"
				return s, nil
			})
			g.AddEdge("decline", graph.End)
			return nil
		},
	})
	res, _ := p.Ask(context.Background(), adaptrag.Request{Question: "退货要在几天内发起？"})
	fmt.Println(res.Path[len(res.Path)-2:], res.Answer)
	// Output:
	// [only_it decline] Only IT questions are answered here.
}
