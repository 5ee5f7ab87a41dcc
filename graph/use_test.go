package graph

import (
	"context"
	"strings"
	"testing"
)

// Middleware added with Use wraps every node, those added after the call
// and through InsertBefore included, the first added outermost.
func TestUseWrapsEveryNode(t *testing.T) {
	var calls []string
	mw := func(tag string) Middleware[[]string] {
		return func(name string, fn NodeFunc[[]string]) NodeFunc[[]string] {
			return func(ctx context.Context, s []string) ([]string, error) {
				calls = append(calls, tag+":"+name)
				return fn(ctx, s)
			}
		}
	}
	step := func(name string) NodeFunc[[]string] {
		return func(_ context.Context, s []string) ([]string, error) { return append(s, name), nil }
	}
	g := New[[]string]("use")
	g.Use(mw("outer")).Use(nil)
	g.AddNode("a", step("a")).AddEdge(Start, "a").AddEdge("a", End)
	g.Use(mw("inner"))
	g.InsertBefore("a", "b", step("b"))
	r, err := g.Compile(Config[[]string]{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Invoke(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out, ","); got != "b,a" {
		t.Errorf("ran %s, want b,a", got)
	}
	if got := strings.Join(calls, ","); got != "outer:b,inner:b,outer:a,inner:a" {
		t.Errorf("middleware calls %s", got)
	}
}
