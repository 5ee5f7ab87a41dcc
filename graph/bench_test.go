package graph_test

// The shapes of ../shared/bench/eino (CloudWeGo Eino's compose graph), so the
// two can run in one go and be compared as a ratio:
//
//	Chain1, Chain10, Chain50   a straight line of no-op nodes
//	RouterChitchat             classify -> generate
//	RouterFactual              classify -> vector -> generate
//	RouterAnalytical           classify -> hybrid -> rerank -> generate
//
// Every node returns its input; the router reads State.Route. With -otel the
// same benchmarks run with a recording OpenTelemetry SDK installed.

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/graph"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

var benchOTel = flag.Bool("otel", false, "run the benchmarks with a recording OpenTelemetry SDK")

type benchState struct {
	Query, Route, Answer string
	Docs                 []string
}

func identity(_ context.Context, s benchState) (benchState, error) { return s, nil }

func benchConfig() graph.Config[benchState] {
	if !*benchOTel {
		return graph.Config[benchState]{}
	}
	// A recording SDK whose spans go nowhere: measures the engine's tracing
	// work, not an exporter's.
	var tp trace.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discard{}))
	return graph.Config[benchState]{TracerProvider: tp}
}

type discard struct{}

func (discard) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discard) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discard) Shutdown(context.Context) error                  { return nil }
func (discard) ForceFlush(context.Context) error                { return nil }

var _ = tracetest.NewSpanRecorder

func chain(b *testing.B, n int) *graph.Runnable[benchState] {
	g := graph.New[benchState]("chain")
	prev := graph.Start
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		g.AddNode(name, identity).AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, graph.End)
	r, err := g.Compile(benchConfig())
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func router(b *testing.B) *graph.Runnable[benchState] {
	g := graph.New[benchState]("router")
	for _, n := range []string{"classify", "vector", "hybrid", "rerank", "generate"} {
		g.AddNode(n, identity)
	}
	g.AddEdge(graph.Start, "classify").
		AddConditionalEdges("classify", func(s benchState) string { return s.Route }, map[string]string{
			"chitchat": "generate", "factual": "vector", "analytical": "hybrid",
		}).
		AddEdge("vector", "generate").
		AddEdge("hybrid", "rerank").
		AddEdge("rerank", "generate").
		AddEdge("generate", graph.End)
	r, err := g.Compile(benchConfig())
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func runBench(b *testing.B, r *graph.Runnable[benchState], route string) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Invoke(ctx, benchState{Route: route}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChain1(b *testing.B)           { runBench(b, chain(b, 1), "") }
func BenchmarkChain10(b *testing.B)          { runBench(b, chain(b, 10), "") }
func BenchmarkChain50(b *testing.B)          { runBench(b, chain(b, 50), "") }
func BenchmarkRouterChitchat(b *testing.B)   { runBench(b, router(b), "chitchat") }
func BenchmarkRouterFactual(b *testing.B)    { runBench(b, router(b), "factual") }
func BenchmarkRouterAnalytical(b *testing.B) { runBench(b, router(b), "analytical") }

// BenchmarkRouterAnalyticalClone is RouterAnalytical with Config.Clone set,
// to show what cloning each node's input costs (here: one slice).
func BenchmarkRouterAnalyticalClone(b *testing.B) {
	g := graph.New[benchState]("router")
	for _, n := range []string{"classify", "vector", "hybrid", "rerank", "generate"} {
		g.AddNode(n, identity)
	}
	g.AddEdge(graph.Start, "classify").
		AddConditionalEdges("classify", func(s benchState) string { return s.Route }, map[string]string{
			"chitchat": "generate", "factual": "vector", "analytical": "hybrid",
		}).
		AddEdge("vector", "generate").AddEdge("hybrid", "rerank").AddEdge("rerank", "generate").
		AddEdge("generate", graph.End)
	cfg := benchConfig()
	cfg.Clone = func(s benchState) benchState { s.Docs = slices.Clone(s.Docs); return s }
	r, err := g.Compile(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	in := benchState{Route: "analytical", Docs: []string{"a", "b", "c"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Invoke(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}
