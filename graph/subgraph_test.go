package graph

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// nestedGraphs returns an outer graph first -> sub -> End whose node sub runs
// the inner graph leaf -> End, where leaf fails with boom.
func nestedGraphs(t *testing.T, cfg Config[st], sub func(*Runnable[st]) NodeFunc[st], boom error) *Runnable[st] {
	t.Helper()
	in := New[st]("inner")
	in.AddNode("leaf", func(context.Context, st) (st, error) { return st{}, boom }).
		AddEdge(Start, "leaf").AddEdge("leaf", End)
	out := New[st]("outer")
	out.AddNode("first", nop).AddNode("sub", sub(mustCompile(t, in, cfg))).
		AddEdge(Start, "first").AddEdge("first", "sub").AddEdge("sub", End)
	return mustCompile(t, out, cfg)
}

func TestNestedGraphErrorKeepsBothNames(t *testing.T) {
	boom := errors.New("boom")
	invoke := func(r *Runnable[st]) NodeFunc[st] {
		return func(ctx context.Context, s st) (st, error) { return r.Invoke(ctx, s) }
	}
	_, err := nestedGraphs(t, Config[st]{}, invoke, boom).Invoke(context.Background(), st{})
	const want = `graph outer: node "sub" (step 2, attempt 1): graph inner: node "leaf" (step 1, attempt 1): boom`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	var outer *NodeError
	if !errors.As(err, &outer) || outer.Graph != "outer" || outer.Node != "sub" {
		t.Fatalf("errors.As found %+v first, want the outer graph's node", outer)
	}
	var inner *NodeError
	if !errors.As(outer.Err, &inner) || inner.Graph != "inner" || inner.Node != "leaf" || !errors.Is(err, boom) {
		t.Fatalf("inner error lost: %v", outer.Err)
	}
}

func TestSubgraph(t *testing.T) {
	boom := errors.New("boom")
	rec, tp := recorder()
	r := nestedGraphs(t, Config[st]{TracerProvider: tp}, Subgraph[st], boom)
	_, err := r.Invoke(context.Background(), st{})
	const want = `graph outer: node "sub" (step 2, attempt 1): graph inner: node "leaf" (step 1, attempt 1): boom`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		name := s.Name()
		if name == "graph.run" {
			name += " " + attrs(s)["graph.name"].AsString()
		}
		spans[name] = s
	}
	parent := map[string]string{
		"graph.run inner": "sub",
		"leaf":            "graph.run inner",
		"sub":             "graph.run outer",
		"first":           "graph.run outer",
	}
	for child, p := range parent {
		c, ps := spans[child], spans[p]
		if c == nil || ps == nil {
			t.Fatalf("spans %v: missing %q or %q", keys(spans), child, p)
		}
		if c.Parent().SpanID() != ps.SpanContext().SpanID() {
			t.Errorf("%s is not a child of %s", child, p)
		}
	}
	for _, name := range []string{"graph.run outer", "sub", "graph.run inner", "leaf"} {
		s := spans[name]
		if s.Status().Code != codes.Error {
			t.Errorf("%s: status %v, want Error", name, s.Status())
		}
	}
	if msg := spans["sub"].Status().Description; msg != want {
		t.Errorf("sub span status %q, want both names", msg)
	}
}

func TestSubgraphRuns(t *testing.T) {
	in := New[st]("inner")
	in.AddNode("a", appendLog("a")).AddNode("b", appendLog("b")).
		AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", End)
	out := New[st]("outer")
	out.AddNode("before", appendLog("before")).AddNode("sub", Subgraph(mustCompile(t, in, Config[st]{}))).
		AddNode("after", appendLog("after")).
		AddEdge(Start, "before").AddEdge("before", "sub").AddEdge("sub", "after").AddEdge("after", End)
	got, err := mustCompile(t, out, Config[st]{}).Invoke(context.Background(), st{})
	if want := []string{"before", "a", "b", "after"}; err != nil || !slices.Equal(got.Log, want) {
		t.Fatalf("log %v, %v; want %v", got.Log, err, want)
	}
	if Subgraph[st](nil) != nil {
		t.Errorf("Subgraph(nil) is not nil")
	}
	_, err = New[st]("g").AddNode("sub", Subgraph[st](nil)).Compile(Config[st]{})
	if !errors.Is(err, ErrNilFunc) {
		t.Errorf("AddNode(Subgraph(nil)): %v, want ErrNilFunc", err)
	}
}

func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func TestEntryRouteErrorNamesStart(t *testing.T) {
	g := New[st]("entry")
	g.AddNode("a", nop).AddEdge("a", End).
		AddConditionalEdges(Start, func(st) string { return "nowhere" }, map[string]string{"a": "a"})
	_, err := mustCompile(t, g, Config[st]{}).Invoke(context.Background(), st{})
	var ne *NodeError
	if !errors.Is(err, ErrUnknownLabel) || !errors.As(err, &ne) || ne.Graph != "entry" || ne.Node != Start {
		t.Fatalf("err = %v, want a NodeError for Start matching ErrUnknownLabel", err)
	}
	if _, ok := errors.Unwrap(ne).(*RouteError); !ok {
		t.Errorf("err = %v: the route error is wrapped more than once", err)
	}
}
