package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

type mapState struct {
	Items []string
	Item  string
	Out   []string
}

func mapGraph(split func(mapState) []mapState) *Graph[mapState] {
	g := New[mapState]("map")
	g.AddNode("plan", func(_ context.Context, s mapState) (mapState, error) { return s, nil }).
		AddNode("work", func(_ context.Context, s mapState) (mapState, error) {
			if s.Item == "boom" {
				return s, errors.New("boom")
			}
			s.Out = append(s.Out, strings.ToUpper(s.Item))
			return s, nil
		}).
		AddNode("join", func(_ context.Context, s mapState) (mapState, error) { return s, nil })
	g.AddEdge(Start, "plan").
		AddMap("plan", "work", "join", split, func(base mapState, outs []mapState) (mapState, error) {
			for _, o := range outs {
				base.Out = append(base.Out, o.Out...)
			}
			return base, nil
		}).
		AddEdge("work", "join").AddEdge("join", End)
	return g
}

func splitItems(s mapState) []mapState {
	var out []mapState
	for _, it := range s.Items {
		out = append(out, mapState{Item: it})
	}
	return out
}

// A map runs its worker once per item, in parallel, merges in split's order
// and shows the worker once per item in the path.
func TestMapRunsOncePerItem(t *testing.T) {
	r, err := mapGraph(splitItems).Compile(Config[mapState]{})
	if err != nil {
		t.Fatal(err)
	}
	for _, items := range [][]string{{"a", "b", "c"}, {"x"}, nil} {
		var path Path
		var out mapState
		for ev, err := range r.Stream(context.Background(), mapState{Items: items}) {
			if err != nil {
				t.Fatal(err)
			}
			path.Add(ev.Edge())
			if ev.Kind == RunEnd {
				out = ev.State
			}
		}
		want := make([]string, len(items))
		for i, it := range items {
			want[i] = strings.ToUpper(it)
		}
		if !slices.Equal(out.Out, want) && !(len(out.Out) == 0 && len(want) == 0) {
			t.Errorf("%v: merged %v, want %v", items, out.Out, want)
		}
		works := 0
		for _, n := range path.Nodes {
			if n == "work" {
				works++
			}
		}
		if works != len(items) || path.Nodes[len(path.Nodes)-1] != "join" {
			t.Errorf("%v: path %v", items, path.Nodes)
		}
	}
	d := r.Diagram()
	if !strings.Contains(d.Mermaid(nil), `==>|"map"|`) || !strings.Contains(d.Text(nil), "once per item") {
		t.Errorf("diagram does not show the map:\n%s", d.Mermaid(nil))
	}
}

func TestMapFailures(t *testing.T) {
	r, err := mapGraph(splitItems).Compile(Config[mapState]{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Invoke(context.Background(), mapState{Items: []string{"a", "boom"}})
	var ne *NodeError
	if !errors.As(err, &ne) || ne.Node != "work" {
		t.Errorf("a failing item: err = %v, want a NodeError from work", err)
	}
	panicky, err := mapGraph(func(mapState) []mapState { panic("bad split") }).Compile(Config[mapState]{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = panicky.Invoke(context.Background(), mapState{})
	if !errors.Is(err, ErrPanic) || !errors.As(err, &ne) || ne.Node != "plan" {
		t.Errorf("a panicking split: err = %v, want ErrPanic naming plan", err)
	}
	if _, err := mapGraph(nil).Compile(Config[mapState]{}); !errors.Is(err, ErrNilFunc) {
		t.Errorf("a nil split: err = %v", err)
	}
}

func ExampleGraph_AddMap() {
	g := New[mapState]("parts")
	g.AddNode("split", func(_ context.Context, s mapState) (mapState, error) { return s, nil }).
		AddNode("answer", func(_ context.Context, s mapState) (mapState, error) {
			s.Out = []string{s.Item + "!"}
			return s, nil
		}).
		AddNode("combine", func(_ context.Context, s mapState) (mapState, error) { return s, nil })
	g.AddEdge(Start, "split").
		AddMap("split", "answer", "combine", splitItems, func(base mapState, outs []mapState) (mapState, error) {
			for _, o := range outs {
				base.Out = append(base.Out, o.Out...)
			}
			return base, nil
		}).
		AddEdge("answer", "combine").AddEdge("combine", End)
	r, _ := g.Compile(Config[mapState]{})
	out, _ := r.Invoke(context.Background(), mapState{Items: []string{"refunds", "invoices"}})
	fmt.Println(out.Out)
	// Output: [refunds! invoices!]
}
