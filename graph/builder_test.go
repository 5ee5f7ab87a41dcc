package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// edges lists a diagram's edges as "from -kind[label]-> to", in order.
func edges(d *Diagram) []string {
	out := make([]string, len(d.Edges))
	for i, e := range d.Edges {
		l := ""
		if e.Label != "" {
			l = "[" + e.Label + "]"
		}
		out[i] = fmt.Sprintf("%s -%s%s-> %s", e.From, e.Kind, l, e.To)
	}
	return out
}

func diffLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func compileErr(t *testing.T, g *Graph[st], target error, mentions ...string) {
	t.Helper()
	_, err := g.Compile(Config[st]{})
	var be *BuildError
	if !errors.Is(err, target) || !errors.As(err, &be) {
		t.Fatalf("Compile: %v, want a *BuildError matching %v", err, target)
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not mention %s", err, m)
		}
	}
}

func TestNodesAndHasNode(t *testing.T) {
	g := routerGraph()
	if want := []string{"classify", "vector", "hybrid", "rerank", "generate"}; !slices.Equal(g.Nodes(), want) {
		t.Errorf("Nodes() = %v, want %v", g.Nodes(), want)
	}
	g.Nodes()[0] = "changed"
	if !g.HasNode("classify") || g.HasNode("changed") || g.HasNode(Start) || g.HasNode(End) || g.HasNode("") {
		t.Errorf("HasNode wrong, or Nodes() aliases the builder")
	}
}

func TestReplaceNode(t *testing.T) {
	g := demoGraph()
	before := edges(mustCompile(t, demoGraph(), Config[st]{}).Diagram())
	g.ReplaceNode("dense", appendLog("dense v2"), WithTimeout(time.Second)).
		ReplaceNode("classify", func(_ context.Context, s st) (st, error) { s.Route = "factual"; return s, nil })
	r := mustCompile(t, g, Config[st]{})
	out, err := r.Invoke(context.Background(), st{})
	if err != nil || !slices.Equal(out.Log, []string{"dense v2"}) {
		t.Fatalf("log %v, %v: want the replacement to run in place", out.Log, err)
	}
	d := r.Diagram()
	// classify's options went with its old function: no timeout, no
	// fallback edge; dense has the new options only.
	want := slices.DeleteFunc(before, func(e string) bool { return e == "classify -fallback[fallback]-> hybrid" })
	diffLines(t, "edges", edges(d), want)
	if d.Nodes[0] != (DiagramNode{Name: "classify"}) || d.Nodes[2] != (DiagramNode{Name: "dense", Timeout: "1s"}) {
		t.Errorf("nodes %+v", d.Nodes[:3])
	}

	compileErr(t, demoGraph().ReplaceNode("ghost", nop), ErrUnknownNode, `"ghost"`, "ReplaceNode")
	compileErr(t, demoGraph().ReplaceNode("dense", nil), ErrNilFunc, `"dense"`, "ReplaceNode")
	compileErr(t, demoGraph().ReplaceNode(Start, nop), ErrUnknownNode, Start)
}

func TestRemoveNode(t *testing.T) {
	g := routerGraph().RemoveNode("hybrid")
	if g.HasNode("hybrid") || !slices.Equal(g.Nodes(), []string{"classify", "vector", "rerank", "generate"}) {
		t.Fatalf("nodes %v", g.Nodes())
	}
	// The conditional edge into hybrid remains and is reported.
	compileErr(t, g, ErrUnknownNode, "classify -> hybrid")
	g.RemoveEdges("classify").
		AddConditionalEdges("classify", func(s st) string { return s.Route }, map[string]string{
			"chitchat": "generate", "factual": "vector", "analytical": "rerank",
		})
	r := mustCompile(t, g, Config[st]{})
	out, err := r.Invoke(context.Background(), st{Route: "analytical"})
	if err != nil || !slices.Equal(out.Log, []string{"classify", "rerank", "generate"}) {
		t.Fatalf("log %v, %v", out.Log, err)
	}
	diffLines(t, "edges", edges(r.Diagram()), []string{
		"__start__ -edge-> classify",
		"classify -conditional[analytical]-> rerank",
		"classify -conditional[chitchat]-> generate",
		"classify -conditional[factual]-> vector",
		"vector -edge-> generate",
		"rerank -edge-> generate",
		"generate -edge-> __end__",
	})

	// A fallback into a removed node is reported too.
	compileErr(t, demoGraph().RemoveNode("hybrid"), ErrUnknownNode, "classify -> hybrid")
	// Removed then added again: a new node, last, with no edges of its own.
	g = routerGraph().RemoveNode("classify").AddNode("classify", nop)
	if g.Nodes()[len(g.Nodes())-1] != "classify" {
		t.Errorf("re-added node not last: %v", g.Nodes())
	}
	compileErr(t, g, ErrNoPathToEnd, `"classify"`)

	compileErr(t, routerGraph().RemoveNode("ghost"), ErrUnknownNode, `"ghost"`, "RemoveNode")
	compileErr(t, routerGraph().RemoveNode(Start), ErrReservedName, "RemoveNode")
	compileErr(t, routerGraph().RemoveNode(End), ErrReservedName, "RemoveNode")
}

func TestRemoveEdges(t *testing.T) {
	// Every kind goes: conditional (classify), fan-out (hybrid), plain
	// (dense), Start's; fallbacks stay.
	g := demoGraph().RemoveEdges("classify").RemoveEdges("hybrid").RemoveEdges("dense").RemoveEdges(Start)
	compileErr(t, g, ErrNoEntry, Start)
	d := g.diagram()
	diffLines(t, "edges", edges(d), []string{
		"direct -edge-> __end__",
		"dense_leg -edge-> fuse",
		"bm25 -edge-> fuse",
		"fuse -edge-> generate",
		"generate -edge-> __end__",
		"classify -fallback[fallback]-> hybrid",
	})
	// Wired anew: a conditional edge to End where there was a plain edge,
	// a plain edge where there was a fan-out.
	g.AddEdge(Start, "classify").
		AddConditionalEdges("classify", func(s st) string { return s.Route }, map[string]string{
			"chitchat": "direct", "factual": "dense", "analytical": "hybrid",
		}).
		AddConditionalEdges("dense", func(s st) string {
			if s.N > 0 {
				return "done"
			}
			return "generate"
		}, map[string]string{"done": End, "generate": "generate"}).
		AddEdge("hybrid", "bm25").
		RemoveNode("dense_leg")
	r := mustCompile(t, g, Config[st]{})
	diffLines(t, "edges", edges(r.Diagram()), []string{
		"__start__ -edge-> classify",
		"classify -conditional[analytical]-> hybrid",
		"classify -conditional[chitchat]-> direct",
		"classify -conditional[factual]-> dense",
		"direct -edge-> __end__",
		"dense -conditional[done]-> __end__",
		"dense -conditional[generate]-> generate",
		"hybrid -edge-> bm25",
		"bm25 -edge-> fuse",
		"fuse -edge-> generate",
		"generate -edge-> __end__",
		"classify -fallback[fallback]-> hybrid",
	})
	out, err := r.Invoke(context.Background(), st{Route: "factual", N: 1})
	if err != nil || out.Route != "factual" {
		t.Fatalf("%+v, %v", out, err)
	}
	var p Path
	for ev, err := range r.Stream(context.Background(), st{Route: "factual", N: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		p.Add(ev.Edge())
	}
	if got := strings.Join(p.Nodes, ","); got != "classify,dense" {
		t.Errorf("path %s, want the run to end after dense", got)
	}

	// Edges declared from a name that is not a node can be removed, and
	// then nothing is reported about them.
	g = routerGraph().AddEdge("ghost", "classify").RemoveEdges("ghost")
	mustCompile(t, g, Config[st]{})
	compileErr(t, routerGraph().RemoveEdges("ghost"), ErrUnknownNode, `"ghost"`, "RemoveEdges")
	compileErr(t, routerGraph().RemoveEdges(End), ErrUnknownNode, "RemoveEdges")
	// A node without edges: nothing to remove, nothing to report.
	mustCompile(t, routerGraph().AddNode("x", nop).RemoveEdges("x").RemoveNode("x"), Config[st]{})
}

func TestInsertBefore(t *testing.T) {
	g := demoGraph().
		InsertBefore("hybrid", "guard", nop, WithTimeout(time.Second)). // conditional target and fallback
		InsertBefore("bm25", "tokenize", nop).                          // a fan-out branch
		InsertBefore("fuse", "check", nop).                             // the join and the branches' edges
		InsertBefore("classify", "trim", nop).                          // Start's edge
		InsertBefore(End, "audit", nop)                                 // every way out
	r := mustCompile(t, g, Config[st]{})
	d := r.Diagram()
	if want := []string{"classify", "direct", "dense", "hybrid", "bm25", "fuse", "generate", "dense_leg", "guard", "tokenize", "check", "trim", "audit"}; !slices.Equal(names(d.Nodes), want) {
		t.Errorf("nodes %v", names(d.Nodes))
	}
	diffLines(t, "edges", edges(d), []string{
		"__start__ -edge-> trim",
		"classify -conditional[analytical]-> guard",
		"classify -conditional[chitchat]-> direct",
		"classify -conditional[factual]-> dense",
		"direct -edge-> audit",
		"dense -edge-> generate",
		"hybrid -fanout-> dense_leg",
		"hybrid -fanout-> tokenize",
		"dense_leg -edge-> check",
		"bm25 -edge-> check",
		"fuse -edge-> generate",
		"generate -edge-> audit",
		"guard -edge-> hybrid",
		"tokenize -edge-> bm25",
		"check -edge-> fuse",
		"trim -edge-> classify",
		"audit -edge-> __end__",
		"hybrid -join[merge]-> check",
		"classify -fallback[fallback]-> guard",
	})
	if d.Nodes[8] != (DiagramNode{Name: "guard", Timeout: "1s"}) {
		t.Errorf("guard %+v lost its options", d.Nodes[8])
	}
	var p Path
	for ev, err := range r.Stream(context.Background(), st{Route: "analytical"}) {
		if err != nil {
			t.Fatal(err)
		}
		p.Add(ev.Edge())
	}
	// The branches run in parallel: compare as a set.
	got := slices.Sorted(slices.Values(p.Nodes))
	want := slices.Sorted(slices.Values([]string{"trim", "classify", "guard", "hybrid", "dense_leg", "tokenize", "bm25", "check", "fuse", "generate", "audit"}))
	if !slices.Equal(got, want) {
		t.Errorf("path %v", p.Nodes)
	}

	// A node inserted before a node it falls back to keeps its own fallback.
	g = routerGraph().InsertBefore("generate", "pre", nop, WithFallback("generate"))
	if fb := g.nodes[g.index["pre"]].fallback; fb != "generate" {
		t.Errorf("inserted node's own fallback redirected to %q", fb)
	}
	// A self-loop into the target goes through the inserted node.
	g = New[st]("loop")
	g.AddNode("inc", func(_ context.Context, s st) (st, error) { s.N++; return s, nil }).
		AddEdge(Start, "inc").
		AddConditionalEdges("inc", func(s st) string {
			if s.N < 3 {
				return "again"
			}
			return "done"
		}, map[string]string{"again": "inc", "done": End}).
		InsertBefore("inc", "count", appendLog("count"))
	out, err := mustCompile(t, g, Config[st]{}).Invoke(context.Background(), st{})
	if err != nil || out.N != 3 || len(out.Log) != 3 {
		t.Errorf("loop through the inserted node: %+v, %v", out, err)
	}
}

func TestInsertBeforeRefusedLeavesGraphAlone(t *testing.T) {
	want := edges(demoGraph().diagram())
	for name, edit := range map[string]func(g *Graph[st]){
		"unknown target": func(g *Graph[st]) { g.InsertBefore("ghost", "x", nop) },
		"Start":          func(g *Graph[st]) { g.InsertBefore(Start, "x", nop) },
		"duplicate name": func(g *Graph[st]) { g.InsertBefore("fuse", "dense", nop) },
		"reserved name":  func(g *Graph[st]) { g.InsertBefore("fuse", End, nop) },
		"nil function":   func(g *Graph[st]) { g.InsertBefore("fuse", "x", nil) },
	} {
		t.Run(name, func(t *testing.T) {
			g := demoGraph()
			edit(g)
			diffLines(t, "edges", edges(g.diagram()), want)
			if g.HasNode("x") {
				t.Errorf("node added")
			}
			if _, err := g.Compile(Config[st]{}); err == nil {
				t.Errorf("Compile did not report the refused insert")
			}
		})
	}
	compileErr(t, demoGraph().InsertBefore("ghost", "x", nop), ErrUnknownNode, `"ghost"`, "InsertBefore")
	compileErr(t, demoGraph().InsertBefore(Start, "x", nop), ErrReservedName, "InsertBefore")
	compileErr(t, demoGraph().InsertBefore("fuse", "dense", nop), ErrDuplicateNode, `"dense"`)
}

// Edits that put back what they took away leave the diagram byte for byte
// as the golden files have it: edges keep their place.
func TestEditedDemoMatchesGolden(t *testing.T) {
	g := demoGraph()
	o := *g.out["hybrid"]
	g.ReplaceNode("classify", nop, WithTimeout(2*time.Second), WithFallback("hybrid")).
		ReplaceNode("dense", nop, WithRetry(RetryPolicy{MaxAttempts: 3})).
		RemoveEdges(Start).AddEdge(Start, "classify").
		RemoveEdges("classify").
		AddConditionalEdges("classify", func(s st) string { return s.Route }, map[string]string{
			"chitchat": "direct", "factual": "dense", "analytical": "hybrid",
		}).
		RemoveEdges("hybrid").AddFanOut("hybrid", o.branches, o.join, o.merge).
		RemoveEdges("dense").AddEdge("dense", "generate").
		RemoveEdges("fuse").AddEdge("fuse", "generate").
		InsertBefore("generate", "tmp", nop).RemoveNode("tmp").
		RemoveEdges("dense").AddEdge("dense", "generate").
		RemoveEdges("fuse").AddEdge("fuse", "generate")
	d := mustCompile(t, g, Config[st]{}).Diagram()
	js, err := d.JSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{
		"demo.mmd":  d.Mermaid(nil),
		"demo.dot":  d.DOT(nil),
		"demo.json": string(js) + "\n",
		"demo.txt":  d.Text(nil),
	} {
		t.Run(name, func(t *testing.T) {
			if *update {
				t.Skip("not a source of golden files")
			}
			golden(t, name, got)
		})
	}
}

// No sequence of builder calls panics; every problem reaches Compile.
func TestEditsNeverPanic(t *testing.T) {
	names := []string{"", Start, End, "a", "ghost"}
	fns := []NodeFunc[st]{nil, nop}
	for _, base := range []func() *Graph[st]{func() *Graph[st] { return New[st]("empty") }, routerGraph, demoGraph} {
		for _, a := range names {
			for _, b := range names {
				for _, fn := range fns {
					g := base()
					g.ReplaceNode(a, fn, nil, WithFallback(b)).
						InsertBefore(a, b, fn, nil).
						RemoveEdges(a).RemoveNode(b).
						InsertBefore(b, a, fn).RemoveNode(a).RemoveEdges(b).
						AddEdge(a, b).AddConditionalEdges(a, nil, nil).AddFanOut(b, nil, a, nil)
					g.Nodes()
					g.HasNode(a)
					_, _ = g.Compile(Config[st]{})
				}
			}
		}
	}
}
