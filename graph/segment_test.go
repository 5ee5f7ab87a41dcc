package graph

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func logNode(name string) NodeFunc[st] {
	return func(_ context.Context, s st) (st, error) {
		s.Log = append(s.Log, name)
		return s, nil
	}
}

// segmentSource is a -> b -(x)-> c -> d -> e -> End, b -(y)-> d, with a
// middleware counting calls.
func segmentSource(calls *int) *Graph[st] {
	g := New[st]("main")
	g.Use(func(name string, fn NodeFunc[st]) NodeFunc[st] {
		return func(ctx context.Context, s st) (st, error) { *calls++; return fn(ctx, s) }
	})
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		g.AddNode(n, logNode(n))
	}
	return g.AddEdge(Start, "a").AddEdge("a", "b").
		AddConditionalEdges("b", func(s st) string { return s.Route }, map[string]string{"x": "c", "y": "d"}).
		AddEdge("c", "d").AddEdge("d", "e").AddEdge("e", End)
}

// A segment runs the stretch from first to last of the edited graph, with
// its conditional edges and middleware, and stops after last.
func TestSegment(t *testing.T) {
	calls := 0
	g := segmentSource(&calls)
	g.InsertBefore("c", "spy", logNode("spy"))
	seg := mustCompile(t, g.Segment("part", "b", "d"), Config[st]{})
	out, err := seg.Invoke(context.Background(), st{Route: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "spy", "c", "d"}; !slices.Equal(out.Log, want) {
		t.Fatalf("segment ran %q, want %q", out.Log, want)
	}
	if calls != 4 {
		t.Fatalf("middleware saw %d calls, want 4", calls)
	}
	out, err = seg.Invoke(context.Background(), st{Route: "y"})
	if err != nil || !slices.Equal(out.Log, []string{"b", "d"}) {
		t.Fatalf("route y ran %q (%v)", out.Log, err)
	}
	// The source graph is unchanged and still compiles whole.
	full, err := mustCompile(t, g, Config[st]{}).Invoke(context.Background(), st{Route: "x"})
	if err != nil || !slices.Equal(full.Log, []string{"a", "b", "spy", "c", "d", "e"}) {
		t.Fatalf("source ran %q (%v)", full.Log, err)
	}
}

func TestSegmentErrors(t *testing.T) {
	calls := 0
	g := segmentSource(&calls)
	if _, err := g.Segment("s", "nope", "d").Compile(Config[st]{}); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("unknown first: %v", err)
	}
	if _, err := g.Segment("s", "d", "b").Compile(Config[st]{}); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("last not reached: %v", err)
	}
	g.AddNode("a", nop) // a duplicate: the source's problem is the segment's too
	if _, err := g.Segment("s", "b", "d").Compile(Config[st]{}); !errors.Is(err, ErrDuplicateNode) {
		t.Fatalf("source error: %v", err)
	}
}
