package graph_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/graph"
)

type inner struct {
	Query string
	Hits  []string
}

// A subgraph over its own state type, with explicit input and output
// mapping; its interrupt names both levels and resumes through the outer
// thread; its failure names both graphs.
func TestSubgraphMap(t *testing.T) {
	search := func(ctx context.Context, s inner) (inner, error) {
		v, err := graph.Interrupt(ctx, "confirm "+s.Query)
		if err != nil {
			return s, err
		}
		if v == "fail" {
			return s, errors.New("index down")
		}
		s.Hits = append(s.Hits, s.Query+":1", s.Query+":2")
		return s, nil
	}
	sub, err := graph.New[inner]("retrieve").AddNode("search", search).
		AddEdge(graph.Start, "search").AddEdge("search", graph.End).Compile(graph.Config[inner]{})
	if err != nil {
		t.Fatal(err)
	}
	node := graph.SubgraphMap(sub,
		func(s ts) inner { return inner{Query: s.Answer} },
		func(s ts, r inner) ts { s.Log = append(s.Log, r.Hits...); return s })
	if graph.SubgraphMap[ts, inner](nil, nil, nil) != nil {
		t.Fatal("nil parts accepted")
	}
	var c counter
	outer := graph.New[ts]("outer").AddNode("a", logNode(&c, "a")).AddNode("retrieve", node).
		AddEdge(graph.Start, "a").AddEdge("a", "retrieve").AddEdge("retrieve", graph.End)
	r := compile(t, outer, graph.Config[ts]{Checkpointer: graph.NewMemoryCheckpointer()})
	ctx := context.Background()
	_, err = r.Invoke(ctx, ts{Answer: "q"}, graph.WithThread("t"))
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) || ie.Interrupts[0].Node != "retrieve/search" || ie.Interrupts[0].Payload != "confirm q" {
		t.Fatalf("err %v", err)
	}
	last, _ := r.History(ctx, "t")
	stored, _ := last[0].Interrupts()
	if len(stored) != 1 || stored[0].Node != "retrieve/search" {
		t.Fatalf("checkpoint's interrupts %+v", stored)
	}
	out, err := r.Resume(ctx, "t", map[string]any{ie.Interrupts[0].ID: "yes"})
	if err != nil || strings.Join(out.Log, ",") != "a,q:1,q:2" {
		t.Fatalf("out %v %v", out.Log, err)
	}
	// A failure inside names both graphs.
	_, err = r.Invoke(ctx, ts{Answer: "z"}, graph.WithThread("u"))
	if !errors.As(err, &ie) {
		t.Fatal(err)
	}
	_, err = r.Resume(ctx, "u", map[string]any{ie.Interrupts[0].ID: "fail"})
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Graph != "outer" || ne.Node != "retrieve" || !strings.Contains(err.Error(), "graph retrieve") || !strings.Contains(err.Error(), `"search"`) {
		t.Fatalf("err %v", err)
	}
}
