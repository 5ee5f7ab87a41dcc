package graph

import (
	"context"
	"slices"
	"testing"
)

// InvokePath returns the path a Stream's events give, for every route of
// the demo graph (the fan-out included, whose branch order may vary).
func TestInvokePathMatchesStream(t *testing.T) {
	r := dumpGraph(t)
	for _, route := range []string{"chitchat", "factual", "analytical"} {
		want := runPath(t, r, st{Route: route})
		_, got, err := r.InvokePath(context.Background(), st{Route: route})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sorted(got.Nodes), sorted(want.Nodes)) || !slices.Equal(sortedEdges(got.Edges), sortedEdges(want.Edges)) {
			t.Errorf("%s: InvokePath %+v, Stream %+v", route, got, *want)
		}
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func sortedEdges(e []Edge) []string {
	var out []string
	for _, x := range e {
		out = append(out, x.From+">"+x.To+":"+x.Label)
	}
	slices.Sort(out)
	return out
}
