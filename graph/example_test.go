package graph_test

import (
	"context"
	"fmt"
	"slices"
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
	app, err := exampleGraph().Compile(graph.Config[State]{})
	if err != nil {
		panic(err)
	}
	return app
}

// exampleGraph is classify -> (retrieve ->) answer, before compiling.
func exampleGraph() *graph.Graph[State] {
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
	return g
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
	_, err := g.Compile(graph.Config[State]{})
	fmt.Println(err)
	// Output: graph: edge refers to an unknown node: edge a -> nowhere
}

// Insert a guard in front of retrieval that ends the run early for the
// questions it refuses.
func ExampleGraph_InsertBefore() {
	g := exampleGraph()
	// Every edge into retrieve now goes to guard, and guard -> retrieve.
	g.InsertBefore("retrieve", "guard", func(_ context.Context, s State) (State, error) {
		if strings.Contains(s.Question, "password") {
			s.Answer = "I cannot help with passwords."
		}
		return s, nil
	})
	// Rewire guard: a conditional edge that may end the run.
	g.RemoveEdges("guard")
	g.AddConditionalEdges("guard", func(s State) string {
		if s.Answer != "" {
			return "refused"
		}
		return "ok"
	}, map[string]string{"ok": "retrieve", "refused": graph.End})
	app, err := g.Compile(graph.Config[State]{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, q := range []string{"what is the admin password?", "how long do I have to return an item?"} {
		out, err := app.Invoke(context.Background(), State{Question: q})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s -> %s\n", q, out.Answer)
	}
	fmt.Print(app.Diagram().Text(nil))
	// Output:
	// what is the admin password? -> I cannot help with passwords.
	// how long do I have to return an item? -> returns: 7 days after delivery
	// graph qa
	//   __start__
	//     ----> classify
	//   classify
	//     --[chitchat]--> answer
	//     --[factual]--> guard
	//   retrieve
	//     ----> answer
	//   answer
	//     ----> __end__
	//   guard
	//     --[ok]--> retrieve
	//     --[refused]--> __end__
}

// Replace a node's function, keeping its edges.
func ExampleGraph_ReplaceNode() {
	g := exampleGraph()
	g.ReplaceNode("retrieve", func(_ context.Context, s State) (State, error) {
		s.Docs = []string{"returns: 30 days for members"}
		return s, nil
	})
	app, err := g.Compile(graph.Config[State]{})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := app.Invoke(context.Background(), State{Question: "how long do I have to return an item?"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Answer)
	fmt.Println(g.Nodes())
	// Output:
	// returns: 30 days for members
	// [classify retrieve answer]
}

// Add a node with its own conditional edge: check keeps the passages that
// share a word with the question and hands the run to a person when none is
// left. With Config.Clone set, check may filter s.Docs in place.
func ExampleGraph_AddNode_conditional() {
	g := exampleGraph()
	g.AddNode("check", func(_ context.Context, s State) (State, error) {
		words := strings.Fields(strings.Trim(s.Question, "?"))
		s.Docs = slices.DeleteFunc(s.Docs, func(d string) bool {
			return !slices.ContainsFunc(words, func(w string) bool { return len(w) > 3 && strings.Contains(d, w) })
		})
		return s, nil
	})
	g.AddNode("handoff", func(_ context.Context, s State) (State, error) {
		s.Answer = "a colleague will get back to you"
		return s, nil
	})
	g.RemoveEdges("retrieve")
	g.AddEdge("retrieve", "check")
	g.AddConditionalEdges("check", func(s State) string {
		if len(s.Docs) == 0 {
			return "none"
		}
		return "found"
	}, map[string]string{"found": "answer", "none": "handoff"})
	g.AddEdge("handoff", graph.End)
	app, err := g.Compile(graph.Config[State]{Clone: func(s State) State {
		s.Docs = slices.Clone(s.Docs)
		return s
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, q := range []string{"how long do I have to return an item?", "what is the VPN address?"} {
		var path graph.Path
		var answer string
		for ev, err := range app.Stream(context.Background(), State{Question: q}) {
			if err != nil {
				fmt.Println(err)
				return
			}
			path.Add(ev.Edge())
			if ev.Kind == graph.RunEnd {
				answer = ev.State.Answer
			}
		}
		fmt.Printf("%s -> %s (%s)\n", q, answer, strings.Join(path.Nodes, " -> "))
	}
	// Output:
	// how long do I have to return an item? -> returns: 7 days after delivery (classify -> retrieve -> check -> answer)
	// what is the VPN address? -> a colleague will get back to you (classify -> retrieve -> check -> handoff)
}

// ReadsInput spares the copy of a state for a node that only reads it:
// with Config.Clone set, every other node gets a clone it may write into.
func ExampleReadsInput() {
	clones := 0
	g := graph.New[State]("summary")
	g.AddNode("retrieve", func(_ context.Context, s State) (State, error) {
		s.Docs = append(s.Docs, "Refunds take five days.", "Shipping is free.")
		return s, nil
	}).
		AddNode("answer", func(_ context.Context, s State) (State, error) {
			s.Answer = strings.Join(s.Docs, " ") // reads Docs, replaces Answer
			return s, nil
		}, graph.ReadsInput()).
		AddEdge(graph.Start, "retrieve").AddEdge("retrieve", "answer").AddEdge("answer", graph.End)
	app, err := g.Compile(graph.Config[State]{Clone: func(s State) State {
		clones++
		s.Docs = slices.Clone(s.Docs)
		return s
	}})
	if err != nil {
		panic(err)
	}
	out, err := app.Invoke(context.Background(), State{Question: "refunds?"})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Answer)
	fmt.Println("clones:", clones)
	// Output:
	// Refunds take five days. Shipping is free.
	// clones: 1
}
