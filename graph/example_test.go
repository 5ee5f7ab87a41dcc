package graph_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/adaptrag/adaptrag/graph"
)

// State is the example workflow's state.
type State struct {
	Question string
	Kind     string
	Docs     []string
	Answer   string
}

func buildExample() *graph.Runnable[State] {
	g := graph.New[State]("qa")
	g.AddNode("classify", func(_ context.Context, s State) (State, error) {
		s.Kind = "factual"
		if strings.HasPrefix(s.Question, "hello") {
			s.Kind = "chitchat"
		}
		return s, nil
	})
	g.AddNode("retrieve", func(_ context.Context, s State) (State, error) {
		s.Docs = []string{"returns: 7 days after delivery"}
		return s, nil
	})
	g.AddNode("answer", func(_ context.Context, s State) (State, error) {
		s.Answer = "hi!"
		if len(s.Docs) > 0 {
			s.Answer = s.Docs[0]
		}
		return s, nil
	})
	g.AddEdge(graph.Start, "classify")
	g.AddConditionalEdges("classify", func(s State) string { return s.Kind }, map[string]string{
		"chitchat": "answer",
		"factual":  "retrieve",
	})
	g.AddEdge("retrieve", "answer")
	g.AddEdge("answer", graph.End)
	app, err := g.Compile(graph.Config{})
	if err != nil {
		panic(err)
	}
	return app
}

// Build a graph with a conditional edge and run it.
func Example() {
	app := buildExample()
	out, err := app.Invoke(context.Background(), State{Question: "how long do I have to return an item?"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Kind, "->", out.Answer)
	// Output: factual -> returns: 7 days after delivery
}

// Stream a run to show progress and record the path it took.
func ExampleRunnable_Stream() {
	app := buildExample()
	var path graph.Path
	for ev, err := range app.Stream(context.Background(), State{Question: "hello there"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		path.Add(ev.Edge())
		if ev.Kind == graph.NodeEnd {
			fmt.Printf("step %d %s label=%q\n", ev.Step, ev.Node, ev.Label)
		}
	}
	fmt.Println(strings.Join(path.Nodes, " -> "))
	// Output:
	// step 1 classify label="chitchat"
	// step 2 answer label=""
	// classify -> answer
}

// Dump the compiled graph as a Mermaid flowchart.
func ExampleDiagram_Mermaid() {
	fmt.Print(buildExample().Diagram().Mermaid(nil))
	// Output:
	// flowchart TD
	//     n_start([START])
	//     n0["classify"]
	//     n1["retrieve"]
	//     n2["answer"]
	//     n_end([END])
	//     n_start --> n0
	//     n0 -->|"chitchat"| n2
	//     n0 -->|"factual"| n1
	//     n1 --> n2
	//     n2 --> n_end
}

// Dump a text outline with the path of one run highlighted.
func ExampleDiagram_Text() {
	app := buildExample()
	var path graph.Path
	for ev, err := range app.Stream(context.Background(), State{Question: "what is the VPN address?"}) {
		if err == nil {
			path.Add(ev.Edge())
		}
	}
	fmt.Print(app.Diagram().Text(&path))
	// Output:
	// graph qa
	// * __start__
	//     ----> classify
	// * classify
	//     --[chitchat]--> answer
	//     --[factual]--> retrieve
	// * retrieve
	//     ----> answer
	// * answer
	//     ----> __end__
	// path: __start__ -> classify -> retrieve -> answer -> __end__
}

// Compile reports every problem at once, each naming its node or edge.
func ExampleGraph_Compile() {
	g := graph.New[State]("broken")
	g.AddNode("a", func(_ context.Context, s State) (State, error) { return s, nil })
	g.AddEdge(graph.Start, "a")
	g.AddEdge("a", "nowhere")
	_, err := g.Compile(graph.Config{})
	fmt.Println(err)
	// Output: graph: edge refers to an unknown node: edge a -> nowhere
}
