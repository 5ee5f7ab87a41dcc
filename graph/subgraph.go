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

// SubgraphMap runs the compiled graph r, over its own state type T, as a
// single node of a graph over S, with explicit mapping: in builds r's
// input from the outer state, out folds r's final state back into it. The
// inner run is as in Subgraph: its failures come back as this graph's
// *NodeError wrapping the inner one (both graphs and nodes named), its
// spans nest under the node's, and an interrupt inside it stops the outer
// run with the interrupt's Node naming both levels ("outer/inner"); on
// resume the node runs again, in maps its input again, and the inner
// interrupt receives its answer. A panic in in or out fails the node with
// ErrPanic.
//
// SubgraphMap returns nil, which AddNode reports as ErrNilFunc, when r, in
// or out is nil.
func SubgraphMap[S, T any](r *Runnable[T], in func(S) T, out func(S, T) S) NodeFunc[S] {
	if r == nil || in == nil || out == nil {
		return nil
	}
	return func(ctx context.Context, s S) (S, error) {
		t, err := r.Invoke(ctx, in(s))
		if err != nil {
			return s, err
		}
		return out(s, t), nil
	}
}
