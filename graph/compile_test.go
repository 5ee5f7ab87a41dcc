package graph

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type st struct {
	N     int
	Route string
	Log   []string
}

func nop(_ context.Context, s st) (st, error) { return s, nil }

func TestCompileErrors(t *testing.T) {
	mergeFirst := func(base st, b []st) (st, error) { return b[0], nil }
	tests := []struct {
		name  string
		build func(g *Graph[st])
		want  error
		names []string // strings the error must mention
	}{
		{"duplicate node", func(g *Graph[st]) {
			g.AddNode("a", nop).AddNode("a", nop).AddEdge(Start, "a").AddEdge("a", End)
		}, ErrDuplicateNode, []string{`"a"`}},
		{"reserved name", func(g *Graph[st]) {
			g.AddNode(End, nop).AddNode("a", nop).AddEdge(Start, "a").AddEdge("a", End)
		}, ErrReservedName, []string{End}},
		{"nil function", func(g *Graph[st]) {
			g.AddNode("a", nil).AddNode("b", nop).AddEdge(Start, "b").AddEdge("b", End)
		}, ErrNilFunc, []string{`"a"`}},
		{"unknown edge target", func(g *Graph[st]) {
			g.AddNode("a", nop).AddEdge(Start, "a").AddEdge("a", "ghost")
		}, ErrUnknownNode, []string{"a -> ghost"}},
		{"unknown edge source", func(g *Graph[st]) {
			g.AddNode("a", nop).AddEdge(Start, "a").AddEdge("a", End).AddEdge("ghost", "a")
		}, ErrUnknownNode, []string{`"ghost"`}},
		{"unknown conditional target", func(g *Graph[st]) {
			g.AddNode("a", nop).AddEdge(Start, "a").
				AddConditionalEdges("a", func(st) string { return "x" }, map[string]string{"x": End, "y": "nowhere"})
		}, ErrUnknownNode, []string{"a -> nowhere"}},
		{"unknown fallback target", func(g *Graph[st]) {
			g.AddNode("a", nop, WithFallback("rescue")).AddEdge(Start, "a").AddEdge("a", End)
		}, ErrUnknownNode, []string{"a -> rescue"}},
		{"missing entry", func(g *Graph[st]) {
			g.AddNode("a", nop).AddEdge("a", End)
		}, ErrNoEntry, []string{Start}},
		{"unreachable node", func(g *Graph[st]) {
			g.AddNode("a", nop).AddNode("island", nop).AddEdge(Start, "a").AddEdge("a", End).AddEdge("island", End)
		}, ErrUnreachable, []string{`"island"`}},
		{"no path to end", func(g *Graph[st]) {
			g.AddNode("a", nop).AddNode("sink", nop).AddEdge(Start, "a").
				AddConditionalEdges("a", func(st) string { return "end" }, map[string]string{"end": End, "sink": "sink"})
		}, ErrNoPathToEnd, []string{`"sink"`}},
		{"closed cycle has no path to end", func(g *Graph[st]) {
			g.AddNode("a", nop).AddNode("b", nop).AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", "a")
		}, ErrNoPathToEnd, []string{`"a"`, `"b"`}},
		{"two plain edges need a fan-out", func(g *Graph[st]) {
			g.AddNode("a", nop).AddNode("b", nop).AddNode("c", nop).
				AddEdge(Start, "a").AddEdge("a", "b").AddEdge("a", "c").AddEdge("b", End).AddEdge("c", End)
		}, ErrAmbiguousEdge, []string{`"a"`, "AddFanOut"}},
		{"plain and conditional edge", func(g *Graph[st]) {
			g.AddNode("a", nop).AddEdge(Start, "a").AddEdge("a", End).
				AddConditionalEdges("a", func(st) string { return "x" }, map[string]string{"x": End})
		}, ErrAmbiguousEdge, []string{`"a"`}},
		{"fan-out without merge", func(g *Graph[st]) {
			g.AddNode("a", nop).AddNode("b", nop).AddNode("c", nop).AddNode("j", nop).
				AddEdge(Start, "a").AddFanOut("a", []string{"b", "c"}, "j", nil).
				AddEdge("b", "j").AddEdge("c", "j").AddEdge("j", End)
		}, ErrFanOut, []string{`"a"`, "merge"}},
		{"fan-out branch never joins", func(g *Graph[st]) {
			g.AddNode("a", nop).AddNode("b", nop).AddNode("c", nop).AddNode("j", nop).
				AddEdge(Start, "a").AddFanOut("a", []string{"b", "c"}, "j", mergeFirst).
				AddEdge("b", "j").AddEdge("c", End).AddEdge("j", End)
		}, ErrFanOut, []string{`"c"`, "never reaches join"}},
		{"fan-out branch escapes to end", func(g *Graph[st]) {
			g.AddNode("a", nop).AddNode("b", nop).AddNode("c", nop).AddNode("j", nop).
				AddEdge(Start, "a").AddFanOut("a", []string{"b", "c"}, "j", mergeFirst).
				AddEdge("b", "j").
				AddConditionalEdges("c", func(st) string { return "j" }, map[string]string{"j": "j", "out": End}).
				AddEdge("j", End)
		}, ErrFanOut, []string{`"c"`, "without passing join"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New[st]("t")
			tt.build(g)
			r, err := g.Compile(Config[st]{})
			if err == nil {
				t.Fatalf("Compile succeeded (%v), want %v", r, tt.want)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %q does not match %v", err, tt.want)
			}
			var be *BuildError
			if !errors.As(err, &be) {
				t.Fatalf("error %T is not a *BuildError", err)
			}
			for _, n := range tt.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("error %q does not mention %s", err, n)
				}
			}
		})
	}
}

func TestCompileReportsEveryProblem(t *testing.T) {
	g := New[st]("t")
	g.AddNode("a", nop).AddNode("a", nop).AddEdge(Start, "a").AddEdge("a", "ghost")
	_, err := g.Compile(Config[st]{})
	if !errors.Is(err, ErrDuplicateNode) || !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("want both duplicate and unknown-node errors, got %v", err)
	}
}

func TestCompiledGraphIgnoresLaterBuilderChanges(t *testing.T) {
	g := New[st]("t")
	g.AddNode("a", func(_ context.Context, s st) (st, error) { s.N++; return s, nil }).AddEdge(Start, "a").AddEdge("a", End)
	r, err := g.Compile(Config[st]{})
	if err != nil {
		t.Fatal(err)
	}
	g.AddNode("b", nop).AddEdge("b", End)
	if got := len(r.Diagram().Nodes); got != 1 {
		t.Fatalf("compiled diagram changed after builder edit: %d nodes", got)
	}
	out, err := r.Invoke(context.Background(), st{})
	if err != nil || out.N != 1 {
		t.Fatalf("Invoke = %+v, %v", out, err)
	}
}
