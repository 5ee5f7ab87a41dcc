// Package graph is a typed state-graph engine: the workflow runtime that
// adaptrag's pipeline runs on. It knows nothing of retrieval or models.
//
// A graph is built over one state type S. Nodes are plain functions that take
// the state and return the updated state; edges are plain, conditional (a
// router returns a label, and every label's target is declared so that
// validation and diagrams are exact) or fan-outs (branches run in parallel on
// copies of the state and a user-supplied merge joins them; parallel writes
// without a merge cannot be expressed).
//
//	g := graph.New[State]("rag")
//	g.AddNode("classify", classify).AddNode("answer", answer)
//	g.AddEdge(graph.Start, "classify")
//	g.AddConditionalEdges("classify", route, map[string]string{"chat": "answer", "done": graph.End})
//	g.AddEdge("answer", graph.End)
//	app, err := g.Compile(graph.Config{})   // every build problem, joined
//	out, err := app.Invoke(ctx, State{...})
//
// Compile validates the graph (unknown targets, unreachable nodes, nodes with
// no path to End, duplicate names, missing entry, ambiguous edges, malformed
// fan-outs) and returns an immutable Runnable, safe for concurrent use.
//
// Running: Invoke returns the final state; Stream yields an Event as each
// node starts and ends, for progress display and for recording the Path a
// run took. Cycles are allowed and bounded by Config.MaxSteps; exceeding it
// fails with a *StepLimitError naming the loop. Per node, WithTimeout,
// WithRetry (errors marked with Retryable) and WithFallback (a node to go to
// on failure; Cause tells it why) add policy. A panicking node fails the run
// with a *NodeError matching ErrPanic instead of crashing the process.
// Cancelling the context stops the run at the next node boundary; the engine
// never leaves a goroutine behind.
//
// Tracing: each run is a "graph.run" span and each node execution a child
// span named after the node, with attributes graph.step, graph.route.label,
// graph.retry.count and the error status. Nodes reach their span through
// trace.SpanFromContext(ctx) to add attributes or child spans. With no SDK
// installed the spans are non-recording and node spans are skipped entirely.
//
// Diagrams: Runnable.Diagram renders as Mermaid, Graphviz DOT, JSON or a text
// outline, optionally highlighting the Path of a run.
package graph
