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
//	app, err := g.Compile(graph.Config[State]{})   // every build problem, joined
//	out, err := app.Invoke(ctx, State{...})
//
// Compile validates the graph (unknown targets, unreachable nodes, nodes with
// no path to End, duplicate names, missing entry, ambiguous edges, malformed
// fan-outs) and returns an immutable Runnable, safe for concurrent use.
//
// Editing: before compiling, a graph assembled elsewhere can be changed in
// place. ReplaceNode swaps a node's function and options and keeps its edges;
// RemoveNode drops a node and its outgoing edges; RemoveEdges clears a node's
// outgoing edges so it can be wired anew (say, with a conditional edge to
// End); InsertBefore puts a new node in front of another, taking over every
// edge that led there. Nodes and HasNode inspect the result. Builder methods
// never panic: a bad edit is reported by Compile like any other problem, and
// edges keep their places, so diagrams of an edited graph stay exact.
//
// Running: Invoke returns the final state; Stream yields an Event as each
// node starts and ends, for progress display and for recording the Path a
// run took. Events are yielded one at a time on the goroutine ranging over
// the stream, fan-out branches included (a branch waits while its event is
// handled), so the loop body needs no locking and a panic in it reaches the
// caller unchanged. Cycles are allowed and bounded by Config.MaxSteps;
// exceeding it fails with a *StepLimitError naming the loop. Per node,
// WithTimeout, WithRetry (errors marked with Retryable) and WithFallback (a
// node to go to on failure; Cause tells it why) add policy. A panicking node
// fails the run with a *NodeError matching ErrPanic instead of crashing the
// process. Cancelling the context, or breaking out of a Stream loop, stops
// the run at the next node boundary; the engine never leaves a goroutine
// behind.
//
// State ownership: states are passed by value, but the slices and maps
// inside them are shared unless Config.Clone is set. With Clone, every node
// attempt, fan-out branch and merge works on its own deep copy and every
// streamed Event.State is one too, so nodes may modify what they receive in
// place (slices.DeleteFunc, map writes), consumers may modify events, and
// the caller's input is never touched. Without Clone nothing is copied and
// nothing is paid for; nodes should then replace, not modify, the slices and
// maps they were given.
//
// Nesting: Subgraph runs a compiled graph as one node of another. A failure
// inside names both graphs: the outer graph's *NodeError wraps the inner
// one, as every node error is wrapped for the graph it ran in.
//
// Tracing: each run is a "graph.run" span and each node execution a child
// span named after the node, with attributes graph.step, graph.route.label,
// graph.retry.count and the error status. Nodes reach their span through
// trace.SpanFromContext(ctx) to add attributes or child spans; a subgraph's
// graph.run span, with its own graph.name, sits under its node's span. With
// no SDK installed the spans are non-recording and node spans are skipped
// entirely.
//
// Diagrams: Runnable.Diagram returns a fresh copy of the graph's structure
// to render as Mermaid, Graphviz DOT, JSON or a text outline, optionally
// highlighting the Path of a run.
package graph
