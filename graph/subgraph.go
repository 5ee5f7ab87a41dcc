package graph

import "context"

// Subgraph runs the compiled graph r as a single node of another graph over
// the same state type. The node's input is r's input and r's final state is
// the node's output.
//
// The inner run is an ordinary Invoke of r: its own Config applies (MaxSteps,
// TracerProvider, Clone), and its steps do not count towards the outer
// graph's limit. Its "graph.run" span, carrying the inner graph.name, is a
// child of the outer node's span. An inner failure comes back as the outer
// graph's *NodeError for this node, wrapping the inner graph's *NodeError, so
// the error names both graphs and both nodes. A Stream of the outer graph
// reports the node as one step; the inner nodes' events are not streamed.
//
// Subgraph(nil) returns nil, which AddNode reports as ErrNilFunc.
func Subgraph[S any](r *Runnable[S]) NodeFunc[S] {
	if r == nil {
		return nil
	}
	return func(ctx context.Context, s S) (S, error) { return r.Invoke(ctx, s) }
}
